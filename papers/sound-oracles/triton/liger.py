"""Liger-Kernel subjects: each numoracle operator driven through Liger's public entry
point (the autograd Function's apply, or the module-level forward/backward function
where the Function's autograd wrapper would hide the gradient the operator models), as
Liger's own tests call them (test/transformers/test_<op>.py).

An adapter takes the operator's module (the subject's, or a mutant's), the inputs
numoracle generated (torch tensors on the GPU, by numoracle input name) and the params,
and returns (outputs by numoracle output name, extra inputs by name): the extra inputs
are statistics the kernel saved (rstd, mean, the forward output y) that numoracle then
judges the backward against, so a backward is judged given exactly what its forward
handed it.
"""

import torch


def _leaf(t):
    return t.detach().clone().requires_grad_(True)


def rms_norm(mod, x, p):
    # casting_mode "llama" (Liger's default): x*rstd rounded to the input dtype before the
    # weight multiply -> plan inter=<dtype> (numoracle's "llama casting" model)
    y = mod.LigerRMSNormFunction.apply(x["x"].clone(), x["w"], p["eps"], 0.0, "llama", False)
    return {"y": y}, {}


def rms_norm_bwd(mod, x, p):
    # casting_mode "gemma": every product in fp32 (dX, dW partials), the default plan; the
    # saved fp32 rstd is handed to numoracle
    xx, ww = _leaf(x["x"]), _leaf(x["w"])
    y = mod.LigerRMSNormFunction.apply(xx, ww, p["eps"], 0.0, "gemma", False)
    rstd = y.grad_fn.saved_tensors[2]
    y.backward(x["dy"].clone())
    return {"dx": xx.grad, "dw": ww.grad}, {"rstd": rstd.detach().float()}


def rms_norm_bwd_llama(mod, x, p):
    # casting_mode "llama" (Liger's default): the dW terms dy * RN_dtype(x*rstd); rows >= 32768
    # with n_cols <= 256 take _block_rms_norm_backward_kernel (real fault 7d54ff88)
    xx, ww = _leaf(x["x"]), _leaf(x["w"])
    y = mod.LigerRMSNormFunction.apply(xx, ww, p["eps"], 0.0, "llama", False)
    rstd = y.grad_fn.saved_tensors[2]
    y.backward(x["dy"].clone())
    return {"dx": xx.grad, "dw": ww.grad}, {"rstd": rstd.detach().float()}


def fused_add_rms_norm(mod, x, p):
    y, s = mod.LigerFusedAddRMSNormFunction.apply(x["x"].clone(), x["residual"].clone(), x["w"], p["eps"],
                                                  0.0, "llama", False)
    return {"y": y, "residual_out": s}, {}


def layer_norm(mod, x, p):
    return {"y": mod.LigerLayerNormFunction.apply(x["x"].clone(), x["w"], x["b"], p["eps"])}, {}


def layer_norm_bwd(mod, x, p):
    xx, ww = _leaf(x["x"]), _leaf(x["w"])
    b = _leaf(torch.zeros_like(x["w"]))
    y = mod.LigerLayerNormFunction.apply(xx, ww, b, p["eps"])
    _, _, _, mean, rstd = y.grad_fn.saved_tensors
    y.backward(x["dy"].clone())
    # Liger saves mean and rstd in the input dtype: numoracle judges dx given those values
    return {"dx": xx.grad, "dw": ww.grad, "db": b.grad}, {"mean": mean.detach().float(),
                                                          "rstd": rstd.detach().float()}


def swiglu(mod, x, p):
    return {"y": mod.LigerSiLUMulFunction.apply(x["a"].clone(), x["b"].clone())}, {}


def swiglu_bwd(mod, x, p):
    a, b = _leaf(x["a"]), _leaf(x["b"])
    y = mod.LigerSiLUMulFunction.apply(a, b)
    y.backward(x["dy"].clone())
    return {"da": a.grad, "db": b.grad}, {}


def geglu(mod, x, p):
    return {"y": mod.LigerGELUMulFunction.apply(x["a"].clone(), x["b"].clone())}, {}


def geglu_bwd(mod, x, p):
    a, b = _leaf(x["a"]), _leaf(x["b"])
    y = mod.LigerGELUMulFunction.apply(a, b)
    y.backward(x["dy"].clone())
    return {"da": a.grad, "db": b.grad}, {}


def softmax(mod, x, p):
    return {"y": mod.LigerSoftmaxFunction.apply(x["x"].clone())}, {}


def softmax_bwd(mod, x, p):
    xx = _leaf(x["x"])
    y = mod.LigerSoftmaxFunction.apply(xx)
    y.backward(x["dy"].clone())
    # the backward reads Liger's own saved y: numoracle judges dx given that y
    return {"dx": xx.grad}, {"y": y.detach()}


def _labels(t):
    return t.to(torch.int64)


def cross_entropy(mod, x, p):
    loss = mod.LigerCrossEntropyFunction.apply(x["x"].clone(), _labels(x["labels"]), None, int(p["ignore_index"]),
                                               0.0, 0.0, "mean")[0]
    return {"loss": loss.reshape(1)}, {}


def cross_entropy_bwd(mod, x, p):
    xx = _leaf(x["x"])
    loss = mod.LigerCrossEntropyFunction.apply(xx, _labels(x["labels"]), None, int(p["ignore_index"]),
                                               0.0, 0.0, "mean")[0]
    loss.backward()
    return {"dx": xx.grad}, {}


def _confident(x, labels):
    """The input family that provokes real fault be1cdc17: every row's true class made
    confident (x_y = max of the row + 8 in the logits' dtype: softmax(x_y) ~ 0.9997), the
    modified logits handed back to numoracle as the input it judges."""
    x = x.clone()
    rows = torch.arange(x.shape[0], device=x.device)
    ok = labels >= 0
    x[rows[ok], labels[ok]] = (x.max(dim=1).values[ok].float() + 8.0).to(x.dtype)
    return x


def cross_entropy_bwd_confident(mod, x, p):
    lab = _labels(x["labels"])
    xc = _confident(x["x"], lab)
    xx = _leaf(xc)
    loss = mod.LigerCrossEntropyFunction.apply(xx, lab, None, int(p["ignore_index"]), 0.0, 0.0, "mean")[0]
    loss.backward()
    return {"dx": xx.grad}, {"x": xc}


def cross_entropy_confident(mod, x, p):
    lab = _labels(x["labels"])
    xc = _confident(x["x"], lab)
    loss = mod.LigerCrossEntropyFunction.apply(xc.clone(), lab, None, int(p["ignore_index"]), 0.0, 0.0, "mean")[0]
    return {"loss": loss.reshape(1)}, {"x": xc}


def kl_div(mod, x, p):
    loss = mod.LigerKLDivLossFunction.apply(x["input"].clone(), x["target"].clone(), "batchmean", False, 1e-10)
    return {"loss": loss.reshape(1)}, {}


def jsd(mod, x, p):
    loss = mod.LigerJSDFunction.apply(x["log_q"].clone(), x["log_p"].clone(), None, p["beta"], -100)
    return {"loss": loss.reshape(1)}, {}


def rope(mod, x, p):
    # rope_forward is what LigerRopeFunction.forward calls (the Function rewrites q, k in
    # place); q and k both get x, q's result is judged
    q = x["x"].clone()
    cos, sin = x["cos"].unsqueeze(0), x["sin"].unsqueeze(0)
    qo, _, _, _ = mod.rope_forward(q, q.clone(), cos, sin)
    return {"y": qo.contiguous()}, {}


def rope_bwd(mod, x, p):
    dq = x["dy"].clone()
    cos, sin = x["cos"].unsqueeze(0), x["sin"].unsqueeze(0)
    dqo, _ = mod.rope_backward(dq, dq.clone(), cos, sin)
    return {"dx": dqo.contiguous()}, {}


def group_norm(mod, x, p):
    C = x["x"].shape[1]
    y = mod.LigerGroupNormFunction.apply(x["x"].clone(), x["w"], x["b"], C, int(p["groups"]), p["eps"])
    return {"y": y}, {}


ADAPTERS = {k: v for k, v in globals().items() if callable(v) and not k.startswith("_") and k != "torch"}
