// The LSTM cell's pointwise steps for the persistent recurrences (lstm_fwd.cu, lstm_bwd.cu): what
// one (unit, sample) does with its gate pre-activations at a step, forward and backward, gates in
// PyTorch's and cuDNN's order i, f, g, o. The recurrences own the rest (the recurrent product,
// the exchange of h and of the gate gradients, what is stored for the backward); a cell owns its
// math. Needs common.cuh (sigmoid, gate_tanh).

// Gates per unit: the rows of W_ih and W_hh a unit owns, the pre-activations a step sums.
#define GATES 4

// Forward: the gate activations `gate` of the pre-activations `pre` (bias, input and recurrent
// products summed), the cell state `c` updated in place; returns the output h.
__device__ __forceinline__ float lstm_cell_forward(const float (&pre)[GATES], float (&gate)[GATES],
                                                   float& c) {
    gate[0] = sigmoid(pre[0]);
    gate[1] = sigmoid(pre[1]);
    gate[2] = gate_tanh(pre[2]);
    gate[3] = sigmoid(pre[3]);
    c = gate[1] * c + gate[0] * gate[2];
    return gate[3] * gate_tanh(c);
}

// Backward: from the step's gate activations `gate`, its cell state `c` and the one before it
// `c_prev`, and the gradients reaching its output h (`dy` from the output, `dh_next` through the
// next step) and its cell state (`dc`, updated in place to the gradient reaching `c_prev`), the
// gradients `d` of the four pre-activations.
__device__ __forceinline__ void lstm_cell_backward(const float (&gate)[GATES], float c, float c_prev,
                                                   float dy, float dh_next, float& dc,
                                                   float (&d)[GATES]) {
    float gi = gate[0], gf = gate[1], gg = gate[2], go = gate[3];
    float dh = dy + dh_next;
    float tc = gate_tanh(c);
    float dct = dc + go * dh * (1.f - tc * tc);
    d[0] = dct * gg * gi * (1.f - gi);
    d[1] = dct * c_prev * gf * (1.f - gf);
    d[2] = dct * gi * (1.f - gg * gg);
    d[3] = dh * tc * go * (1.f - go);
    dc = dct * gf;
}
