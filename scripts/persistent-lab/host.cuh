// The harnesses' host-side operands: a reproducible uniform generator (the same sequence in
// every harness) and bf16 conversions (round to nearest even), after half.cuh's u16 and u32.
#pragma once
#include <cstring>

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;
static float uniform(float lo, float hi) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)((rng_state >> 40) & 0xffffff) / 16777216.f;
}
static u16 to_bits(float v) {
    u32 u;
    memcpy(&u, &v, 4);
    return (u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static float from_bits(u16 v) {
    u32 u = (u32)v << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
