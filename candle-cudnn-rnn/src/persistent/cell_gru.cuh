// The GRU cell's pointwise steps for the persistent recurrences (lstm_fwd.cu), with PyTorch's
// and cuDNN's semantics: gates in the order r, z, n;
//   r = sigmoid(W_ir x + b_ir + W_hr h + b_hr),  z = sigmoid(W_iz x + b_iz + W_hz h + b_hz),
//   n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),  h' = (1 - z) * n + z * h.
// The reset gate multiplies n's recurrent product (bias included), so that product stays
// apart from its input's (SPLIT_GATE). The state carried from step to step is h in f32 (as
// the LSTM carries c); the exchange between blocks and the outputs are h in bf16 or f16.
// Needs common.cuh (sigmoid, gate_tanh).

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
