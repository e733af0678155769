// The GRU cell's pointwise steps for the persistent recurrences (recurrence_fwd.cu), with PyTorch's
// and cuDNN's semantics: gates in the order r, z, n;
//   r = sigmoid(W_ir x + b_ir + W_hr h + b_hr),  z = sigmoid(W_iz x + b_iz + W_hz h + b_hz),
//   n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),  h' = (1 - z) * n + z * h.
// The reset gate multiplies n's recurrent product (bias included), so that product stays
// apart from its input's (SPLIT_GATE). The state carried from step to step is h in f32 (as
// the LSTM carries c); the exchange between blocks and the outputs are h in bf16 or f16.
// Needs common.cuh (sigmoid, gate_tanh); recurrence_fwd.cu and recurrence_bwd.cu call the steps.

#define GATES 3
#define SPLIT_GATE 2
// Saved per unit and step for the backward: the state h (f32) and n's recurrent product
// W_hn h_{t-1} + b_hn (its gradient needs it; r and n alone do not give it back).
#define CELL_SAVED 2
#define CELL_HAS_C 0

// Forward: the gate activations `gate` of the pre-activations `pre` (for n: its input product
// and b_in only) and n's recurrent product `rec` (with b_hn), the state `h` updated in place;
// `saved` gets it and `rec`; returns the output h.
__device__ __forceinline__ float cell_forward(const float (&pre)[GATES], float rec,
                                              float (&gate)[GATES], float& h,
                                              float (&saved)[CELL_SAVED]) {
    gate[0] = sigmoid(pre[0]);
    gate[1] = sigmoid(pre[1]);
    gate[2] = gate_tanh(pre[2] + gate[0] * rec);
    h = gate[2] + gate[1] * (h - gate[2]);
    saved[0] = h;
    saved[1] = rec;
    return h;
}

// Backward: from the step's gate activations `gate`, what it saved (`saved`: h_t and n's
// recurrent product) and the state before it (`prev`: h_{t-1} in f32), and the gradients
// reaching h_t (`dy` from the output, `dh_next` through the next step's recurrent product,
// `carry` through its z * h term, updated in place to this step's z * dh, which reaches
// h_{t-1} directly), the gradients `d` of the three pre-activations on the input's side and
// `d_rec`, n's on the recurrent product's (r times d[2]); r's and z's are the same on both
// sides.
__device__ __forceinline__ void cell_backward(const float (&gate)[GATES],
                                              const float (&saved)[CELL_SAVED], float prev,
                                              float dy, float dh_next, float& carry,
                                              float (&d)[GATES], float& d_rec) {
    float r = gate[0], z = gate[1], n = gate[2];
    float dh = dy + dh_next + carry;
    float dn = dh * (1.f - z) * (1.f - n * n);
    d[0] = dn * saved[1] * r * (1.f - r);
    d[1] = dh * (prev - n) * z * (1.f - z);
    d[2] = dn;
    d_rec = dn * r;
    carry = dh * z;
}
