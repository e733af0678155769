import torch
a = torch.randn(960, 512, device="cuda", dtype=torch.float16)
b = torch.randn(512, 1536, device="cuda", dtype=torch.float16)
c = a @ b            # cuBLAS (on Hopper, an nvjet kernel)
d = c * 2.0          # an elementwise kernel reads every element of c
torch.cuda.synchronize()
print("sum", float(d.float().sum()))
