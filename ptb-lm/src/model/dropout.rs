//! Inverted dropout whose masks come from a counter-based generator (Philox4x32-10) keyed by a
//! seed and a step counter that live in device memory. A kernel reads them when it runs, so a
//! training step captured once as a CUDA graph draws new masks at every replay (a seed or an
//! offset passed as a kernel argument would be frozen into the graph), and `advance`, itself a
//! kernel, moves the counter at the end of each step. Mask generation and its application are
//! one kernel; the backward pass recomputes the same mask from the same counter.
//!
//! The CPU implementation draws the very same masks (integer arithmetic only): it is the
//! reference the CUDA kernel is checked against.

use candle_core::{bail, CpuStorage, CustomOp1, InplaceOp1, Layout, Result, Shape, Tensor};

/// Philox4x32-10 (Salmon et al. 2011, as in Random123 and cuRAND): four 32-bit words from a
/// 128-bit counter and a 64-bit key.
pub fn philox(mut ctr: [u32; 4], mut key: [u32; 2]) -> [u32; 4] {
    const M0: u64 = 0xD251_1F53;
    const M1: u64 = 0xCD9E_8D57;
    for round in 0..10 {
        if round > 0 {
            key[0] = key[0].wrapping_add(0x9E37_79B9);
            key[1] = key[1].wrapping_add(0xBB67_AE85);
        }
        let p0 = M0 * ctr[0] as u64;
        let p1 = M1 * ctr[2] as u64;
        ctr = [
            (p1 >> 32) as u32 ^ ctr[1] ^ key[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ ctr[3] ^ key[1],
            p0 as u32,
        ];
    }
    ctr
}

/// The generator's state, four u32 on the tensor's device: seed (low, high), step (low, high).
/// Element `i` of the `slot`-th dropout of a step keeps its value unless word `i % 4` of
/// `philox([i / 4, slot, step_lo, step_hi], [seed_lo, seed_hi])` is below `p · 2^32`.
pub struct DropoutRng {
    state: Tensor,
}

fn words(seed: u64, step: u64) -> [u32; 4] {
    [
        seed as u32,
        (seed >> 32) as u32,
        step as u32,
        (step >> 32) as u32,
    ]
}

impl DropoutRng {
    pub fn new(seed: u64, device: &candle_core::Device) -> Result<Self> {
        let rng = Self {
            state: Tensor::zeros(4, candle_core::DType::U32, device)?,
        };
        rng.reseed(seed)?;
        Ok(rng)
    }

    /// Starts again from `seed` at step 0, in place (a captured graph keeps reading the same
    /// memory). Written by fill kernels rather than copied from the host: the memory stays
    /// this generator's own (candle's graph-capture cache hands out shared buffers for small
    /// uploads).
    pub fn reseed(&self, seed: u64) -> Result<()> {
        self.set_position(seed, 0)
    }

    /// Moves to the next step, on the device.
    pub fn advance(&self) -> Result<()> {
        self.state.inplace_op1(&Advance)
    }

    /// Continues from `step` of `seed`, in place (between steps, outside any graph capture).
    pub fn set_position(&self, seed: u64, step: u64) -> Result<()> {
        for (i, w) in words(seed, step).into_iter().enumerate() {
            self.state.narrow(0, i, 1)?.const_set(w.into())?;
        }
        Ok(())
    }

    /// The (seed, step) the next masks are drawn from (reads the device).
    pub fn position(&self) -> Result<(u64, u64)> {
        let w = self.state.to_vec1::<u32>()?;
        Ok((
            w[0] as u64 | (w[1] as u64) << 32,
            w[2] as u64 | (w[3] as u64) << 32,
        ))
    }

    /// `x` with each element zeroed with probability `p` and the others scaled by `1/(1-p)`,
    /// by the mask of dropout number `slot` of the current step.
    pub fn dropout(&self, x: &Tensor, p: f32, slot: u32) -> Result<Tensor> {
        if !(0.0..1.0).contains(&p) {
            bail!("dropout: probability {p} is not in [0, 1)")
        }
        if p == 0.0 {
            return Ok(x.clone());
        }
        let op = Dropout {
            state: self.state.clone(),
            threshold: (p as f64 * 4294967296.0).round().min(u32::MAX as f64) as u32,
            scale: (1.0 / (1.0 - p as f64)) as f32,
            slot,
        };
        x.contiguous()?.apply_op1(op)
    }
}

struct Advance;

impl InplaceOp1 for Advance {
    fn name(&self) -> &'static str {
        "dropout-advance"
    }

    fn cpu_fwd(&self, s: &mut CpuStorage, _: &Layout) -> Result<()> {
        let CpuStorage::U32(w) = s else {
            bail!("dropout: the generator's state must be u32")
        };
        let step = (w[2] as u64 | (w[3] as u64) << 32).wrapping_add(1);
        (w[2], w[3]) = (step as u32, (step >> 32) as u32);
        Ok(())
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(&self, s: &mut candle_core::CudaStorage, _: &Layout) -> Result<()> {
        cuda::advance(s)
    }
}

#[derive(Clone)]
struct Dropout {
    state: Tensor,
    threshold: u32,
    scale: f32,
    slot: u32,
}

impl Dropout {
    fn cpu_apply<T: candle_core::WithDType>(
        &self,
        x: &[T],
        key: [u32; 2],
        step: [u32; 2],
    ) -> Vec<T> {
        let mut out = Vec::with_capacity(x.len());
        for (g, chunk) in x.chunks(4).enumerate() {
            let r = philox([g as u32, self.slot, step[0], step[1]], key);
            for (v, r) in chunk.iter().zip(r) {
                out.push(match r < self.threshold {
                    true => T::zero(),
                    false => T::from_f64((v.to_f64() as f32 * self.scale) as f64),
                });
            }
        }
        out
    }
}

impl CustomOp1 for Dropout {
    fn name(&self) -> &'static str {
        "dropout"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let Some((lo, hi)) = l.contiguous_offsets() else {
            bail!("dropout: the input must be contiguous")
        };
        let (st, sl) = self.state.storage_and_layout();
        let candle_core::Storage::Cpu(st) = &*st else {
            bail!("dropout: the generator lives on another device than the input")
        };
        let w = &st.as_slice::<u32>()?[sl.start_offset()..];
        let (key, step) = ([w[0], w[1]], [w[2], w[3]]);
        let out = match s {
            CpuStorage::F32(x) => CpuStorage::F32(self.cpu_apply(&x[lo..hi], key, step)),
            CpuStorage::F64(x) => CpuStorage::F64(self.cpu_apply(&x[lo..hi], key, step)),
            CpuStorage::BF16(x) => CpuStorage::BF16(self.cpu_apply(&x[lo..hi], key, step)),
            CpuStorage::F16(x) => CpuStorage::F16(self.cpu_apply(&x[lo..hi], key, step)),
            _ => bail!("dropout: a float input is needed"),
        };
        Ok((out, l.shape().clone()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s: &candle_core::CudaStorage,
        l: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let (st, _) = self.state.storage_and_layout();
        let candle_core::Storage::Cuda(st) = &*st else {
            bail!("dropout: the generator lives on another device than the input")
        };
        Ok((cuda::dropout(self, s, l, st)?, l.shape().clone()))
    }

    /// The gradient is the incoming one through the same mask and scale.
    fn bwd(&self, _: &Tensor, _: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        Ok(Some(grad.contiguous()?.apply_op1_no_bwd(self)?))
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    //! Launches `dropout.cu`'s kernels: one thread per four elements (one Philox call, the
    //! prelude's, which draws the bits of `philox` above); the state is read on the device.

    use super::Dropout;
    use crate::gpu::nvrtc::{dtype_suffix, for_dtype};
    use candle_core::backend::BackendStorage;
    use candle_core::cuda_backend::cudarc::driver::{LaunchConfig, PushKernelArg};
    use candle_core::cuda_backend::WrapErr;
    use candle_core::{CudaStorage, Layout, Result};
    use candle_cudnn_rnn::kernels::view;
    use candle_cudnn_rnn::kernels::{Module, HALF, PHILOX};

    const SOURCE: &str = include_str!("dropout.cu");
    static KERNELS: Module = Module::new("ptb_lm_dropout", &[HALF, PHILOX, SOURCE]);
    const THREADS: u32 = 256;

    pub fn advance(s: &mut CudaStorage) -> Result<()> {
        let dev = s.device().clone();
        let f = KERNELS.function(&dev, "dropout_advance")?;
        let stream = dev.cuda_stream();
        let state = s.as_cuda_slice_mut::<u32>()?;
        let mut b = stream.launch_builder(&f);
        b.arg(state);
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the state holds four u32; one thread updates it.
        unsafe { b.launch(one) }.w()?;
        Ok(())
    }

    pub fn dropout(
        op: &Dropout,
        x: &CudaStorage,
        l: &Layout,
        s: &CudaStorage,
    ) -> Result<CudaStorage> {
        let n = l.shape().elem_count();
        let dev = x.device().clone();
        let name = format!("dropout_{}", dtype_suffix(x.dtype(), "dropout")?);
        let f = KERNELS.function(&dev, &name)?;
        let stream = dev.cuda_stream();
        let state = s.as_cuda_slice::<u32>()?;
        let groups = n.div_ceil(4) as u32;
        let cfg = LaunchConfig {
            grid_dim: (groups.div_ceil(THREADS).max(1), 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let n64 = n as i64;
        macro_rules! launch {
            ($t:ty) => {{
                let xs = view(x.as_cuda_slice::<$t>()?, l)?;
                // SAFETY: every element is written by the kernel.
                let y = unsafe { dev.alloc::<$t>(n)? };
                let mut b = stream.launch_builder(&f);
                b.arg(&xs)
                    .arg(&y)
                    .arg(state)
                    .arg(&op.slot)
                    .arg(&op.threshold)
                    .arg(&op.scale)
                    .arg(&n64);
                // SAFETY: n inputs and outputs, the four-word state.
                unsafe { b.launch(cfg) }.w()?;
                CudaStorage::wrap_cuda_slice(y, dev)
            }};
        }
        Ok(for_dtype!(x.dtype(), launch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device, Var};

    /// Random123's known-answer vector for Philox4x32-10 (counter and key all ones bits).
    #[test]
    fn philox_matches_the_reference_vector() {
        assert_eq!(
            philox([0; 4], [0; 2]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    fn kept(t: &Tensor) -> Vec<bool> {
        t.flatten_all()
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .map(|&v| v != 0.0)
            .collect()
    }

    /// Masks change with the step and the slot, replay from the same seed and step, and keep
    /// about 1 - p of the elements scaled by 1/(1-p).
    #[test]
    fn masks_follow_seed_step_and_slot() {
        let dev = Device::Cpu;
        let x = Tensor::ones((64, 33), DType::F32, &dev).unwrap();
        let rng = DropoutRng::new(7, &dev).unwrap();
        let a = rng.dropout(&x, 0.35, 0).unwrap();
        let other_slot = rng.dropout(&x, 0.35, 1).unwrap();
        rng.advance().unwrap();
        assert_eq!(rng.position().unwrap(), (7, 1));
        let b = rng.dropout(&x, 0.35, 0).unwrap();
        assert_ne!(kept(&a), kept(&b), "the next step reused the mask");
        assert_ne!(kept(&a), kept(&other_slot), "another slot reused the mask");
        rng.reseed(7).unwrap();
        assert_eq!(kept(&rng.dropout(&x, 0.35, 0).unwrap()), kept(&a));
        rng.reseed(8).unwrap();
        assert_ne!(kept(&rng.dropout(&x, 0.35, 0).unwrap()), kept(&a));

        let v = a.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let n_kept = v.iter().filter(|&&e| e != 0.0).count();
        let frac = n_kept as f64 / v.len() as f64;
        assert!((frac - 0.65).abs() < 0.03, "kept {frac}");
        let scale = (1.0 / (1.0 - 0.35f64)) as f32;
        assert!(v.iter().all(|&e| e == 0.0 || e == scale));
    }

    /// The gradient goes through the forward mask: d/dx Σ (dropout(x) · c) = mask · scale · c.
    #[test]
    fn gradient_uses_the_forward_mask() {
        let dev = Device::Cpu;
        let x = Var::from_tensor(&Tensor::randn(0f32, 1., (10, 7), &dev).unwrap()).unwrap();
        let c = Tensor::randn(0f32, 1., (10, 7), &dev).unwrap();
        let rng = DropoutRng::new(3, &dev).unwrap();
        let y = rng.dropout(x.as_tensor(), 0.5, 2).unwrap();
        let g = (&y * &c).unwrap().sum_all().unwrap().backward().unwrap();
        let g = g.get(x.as_tensor()).unwrap();
        let want = rng
            .dropout(&Tensor::ones((10, 7), DType::F32, &dev).unwrap(), 0.5, 2)
            .unwrap()
            .mul(&c)
            .unwrap();
        assert_eq!(
            g.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
            want.flatten_all().unwrap().to_vec1::<f32>().unwrap()
        );
    }

    /// The CUDA kernel draws the CPU's masks bit for bit, in every dtype, and advances the same.
    #[cfg(feature = "cuda")]
    #[test]
    fn cuda_matches_cpu() {
        let _gpu = crate::gpu::test_gpu::shared();
        let Ok(gpu) = Device::new_cuda(0) else {
            return;
        };
        for (dt, p, shape) in [
            (DType::F32, 0.4, (37, 129)),
            (DType::BF16, 0.4, (37, 129)),
            (DType::F16, 0.4, (37, 129)),
            (DType::F32, 0.65, (700, 1500)),
        ] {
            let x = Tensor::randn(0f32, 1., shape, &Device::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let (cpu, dev) = (
                DropoutRng::new(u64::MAX - 5, &Device::Cpu).unwrap(),
                DropoutRng::new(u64::MAX - 5, &gpu).unwrap(),
            );
            for _ in 0..3 {
                cpu.advance().unwrap();
                dev.advance().unwrap();
            }
            assert_eq!(dev.position().unwrap(), cpu.position().unwrap());
            let want = cpu.dropout(&x, p, 5).unwrap();
            let got = dev.dropout(&x.to_device(&gpu).unwrap(), p, 5).unwrap();
            let bits = |t: &Tensor| {
                t.to_dtype(DType::F32)
                    .unwrap()
                    .flatten_all()
                    .unwrap()
                    .to_vec1::<f32>()
                    .unwrap()
            };
            assert_eq!(bits(&got), bits(&want), "{dt:?} p {p}");
            // The gradient on the device goes through the forward's mask.
            let xv = candle_core::Var::from_tensor(&x.to_device(&gpu).unwrap()).unwrap();
            let y = dev.dropout(xv.as_tensor(), p, 5).unwrap();
            let g = y.sum_all().unwrap().backward().unwrap();
            let g = g.get(xv.as_tensor()).unwrap();
            let kept_y: Vec<bool> = bits(&y).iter().map(|&v| v != 0.0).collect();
            let kept_g: Vec<bool> = bits(g).iter().map(|&v| v != 0.0).collect();
            assert_eq!(kept_y, kept_g, "{dt:?} p {p}: backward mask");
            let frac = kept_y.iter().filter(|&&k| k).count() as f64 / kept_y.len() as f64;
            assert!(
                (frac - (1.0 - p as f64)).abs() < 0.03,
                "{dt:?} p {p}: kept {frac}"
            );
        }
    }
}
