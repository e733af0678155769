// Half-precision floats for NVRTC sources written without CUDA's headers (so that they build
// wherever candle's CUDA backend does): bf16 and f16 held as their raw 16 bits, converted to f32
// exactly and from f32 with rounding to nearest even (a NaN stays a NaN). Three ways in, one per
// kind of kernel:
//   - on raw bits: bf16_to_f32, f32_to_bf16, f16_to_f32, f32_to_f16;
//   - typed, for kernels templated on their element type: the structs bf16 and f16, load(x) to
//     f32 and store(p, v) from f32, overloaded for float too;
//   - for a module compiled for one half type, picked by ELEM_BF16 (1: bf16, 0: f16) when it is
//     defined: to_f and from_f on that type's bits; for a module of f32 operands (ELEM_F32 1,
//     without ELEM_BF16) on f32.

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// A bf16 is the upper half of an f32's bits.
__device__ __forceinline__ float bf16_to_f32(u16 v) { return __uint_as_float(((u32)v) << 16); }

// To nearest even, a NaN to the canonical quiet NaN (0x7fc0): from sm_80 by the hardware's
// conversion (one instruction, not the rounding's five below on a recurrence step's path: the
// persistent kernels' bf16 calls 1-4% faster, results/2026-11-29-h200-prologue/), before it by
// adding 0x7fff plus the kept half's lowest bit (which could carry a NaN into an infinity: hence
// the NaN's own case).
__device__ __forceinline__ u16 f32_to_bf16(float v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    u16 h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
    return (v != v) ? (u16)0x7fc0 : h;
#else
    u32 u = __float_as_uint(v);
    return (v != v) ? (u16)0x7fc0 : (u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
}

__device__ __forceinline__ float f16_to_f32(u16 v) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
}

__device__ __forceinline__ u16 f32_to_f16(float v) {
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    return h;
}

struct bf16 { u16 x; };
struct f16 { u16 x; };

__device__ __forceinline__ float load(float v) { return v; }
__device__ __forceinline__ float load(bf16 v) { return bf16_to_f32(v.x); }
__device__ __forceinline__ float load(f16 v) { return f16_to_f32(v.x); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(bf16* p, float v) { p->x = f32_to_bf16(v); }
__device__ __forceinline__ void store(f16* p, float v) { p->x = f32_to_f16(v); }

#if defined(ELEM_F32) && ELEM_F32
// A module of f32 operands (the persistent kernels' TF32 products): to_f and from_f on f32 too.
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float from_f(float v) { return v; }
#endif
#ifdef ELEM_BF16
#if ELEM_BF16
__device__ __forceinline__ float to_f(u16 v) { return bf16_to_f32(v); }
__device__ __forceinline__ u16 from_f(float v) { return f32_to_bf16(v); }
#else
__device__ __forceinline__ float to_f(u16 v) { return f16_to_f32(v); }
__device__ __forceinline__ u16 from_f(float v) { return f32_to_f16(v); }
#endif
#endif
