// The LSTM cell's pointwise steps for the persistent recurrences (recurrence_fwd.cu, recurrence_bwd.cu): what
// one (unit, sample) does with its gate pre-activations at a step, forward and backward, gates in
// PyTorch's and cuDNN's order i, f, g, o. The recurrences own the rest (the recurrent product,
// the exchange of h and of the gate gradients, what is stored for the backward); a cell owns its
// math. Needs common.cuh (sigmoid, gate_tanh).

// Gates per unit: the rows of W_ih and W_hh a unit owns, the pre-activations a step sums.
#define GATES 4
// The gate whose recurrent product stays apart from its input's (none: every gate sums bias,
// input and recurrent products; a GRU's n gate does not, cell_gru.cuh).
#define SPLIT_GATE -1
// Floats per unit and step the forward saves for the backward besides the gate activations
// (the cell state c), and whether the cell has a state c besides h (c_0, c_n).
#define CELL_SAVED 1
#define CELL_HAS_C 1

// Forward: the gate activations `gate` of the pre-activations `pre` (bias, input and recurrent
// products summed; `rec`, a split gate's recurrent product, unused), the cell state `c`
// updated in place; `saved` gets it for the backward; returns the output h.
__device__ __forceinline__ float cell_forward(const float (&pre)[GATES], float rec,
                                              float (&gate)[GATES], float& c,
                                              float (&saved)[CELL_SAVED]) {
    gate[0] = sigmoid(pre[0]);
    gate[1] = sigmoid(pre[1]);
    gate[2] = gate_tanh(pre[2]);
    gate[3] = sigmoid(pre[3]);
    c = gate[1] * c + gate[0] * gate[2];
    saved[0] = c;
    return gate[3] * gate_tanh(c);
}

// Backward: from the step's gate activations `gate`, what it saved (`saved`: its cell state c)
// and the state before it (`prev`: c_{t-1}), and the gradients reaching its output h (`dy` from
// the output, `dh_next` through the next step's recurrent product) and its cell state (`carry`:
// dc, updated in place to the gradient reaching c_{t-1}), the gradients `d` of the four
// pre-activations (the input's and the recurrent product's alike: `d_rec`, a split gate's
// recurrent side, is left alone).
__device__ __forceinline__ void cell_backward(const float (&gate)[GATES],
                                              const float (&saved)[CELL_SAVED], float prev,
                                              float dy, float dh_next, float& carry,
                                              float (&d)[GATES], float& d_rec) {
    float gi = gate[0], gf = gate[1], gg = gate[2], go = gate[3];
    float dh = dy + dh_next;
    float tc = gate_tanh(saved[0]);
    float dct = carry + go * dh * (1.f - tc * tc);
    d[0] = dct * gg * gi * (1.f - gi);
    d[1] = dct * prev * gf * (1.f - gf);
    d[2] = dct * gi * (1.f - gg * gg);
    d[3] = dh * tc * go * (1.f - go);
    carry = dct * gf;
}
