//! Launching a persistent kernel: every block resident at once (its grid barrier waits for them
//! all), plain cooperative or in thread-block clusters (`cuLaunchKernelEx`: cudarc's launch
//! builder has no cluster dimension).

use candle_core::cuda_backend::cudarc::driver::{
    result, sys, CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
};
use candle_core::Result;

/// The most batch groups of a launch (its grid's second dimension, `common.cuh`'s GROUPS): the
/// grid barrier's words of each group, [`GROUP_WORDS`] apart, and the words that join them fill
/// at most `forward.rs`'s barrier line.
pub(super) const MAX_GROUPS: usize = 16;

/// The portable cluster size: a launch in larger clusters (up to 16 on sm_90) needs its
/// kernel's non-portable attribute (`plan.rs`'s `Plan::kernel`).
pub(super) const PORTABLE_CLUSTER_BLOCKS: usize = 8;

/// The largest cluster sm_90 gives a kernel with the non-portable attribute.
pub(super) const MOST_CLUSTER_BLOCKS: usize = 16;

/// 32-bit words between two groups' barrier words (`common.cuh`'s GROUP_WORDS): a 32-byte
/// sector each.
pub(super) const GROUP_WORDS: usize = 8;

/// The driver's kernel parameters: pointers at each of `values`, then at `seq`.
fn params(values: &mut [u64], seq: &mut i32) -> Vec<*mut std::ffi::c_void> {
    let mut params: Vec<*mut std::ffi::c_void> = values
        .iter_mut()
        .map(|v| v as *mut u64 as *mut std::ffi::c_void)
        .collect();
    params.push(seq as *mut i32 as *mut std::ffi::c_void);
    params
}

fn err(e: impl std::fmt::Display) -> candle_core::Error {
    candle_core::Error::Msg(format!("rnn: persistent kernel launch: {e}"))
}

/// A persistent kernel `f` on `stream` over `cfg`'s grid, in clusters of `cluster` blocks (1:
/// none); launched on the side stream `side` instead, where one is given (a bidirectional
/// layer's second direction beside the first, `units.rs`).
pub(super) struct Launch<'a> {
    pub stream: &'a CudaStream,
    pub f: &'a CudaFunction,
    pub cfg: LaunchConfig,
    pub cluster: usize,
    pub side: Option<sys::CUstream>,
}

impl Launch<'_> {
    /// Launches the kernel with the device addresses `ptrs` and the step count as arguments.
    pub fn cooperative(&self, ptrs: &[u64], seq: i32) -> Result<()> {
        if self.cluster > 1 {
            return self.cooperative_clusters(ptrs, seq);
        }
        let side = match self.side {
            Some(side) => side,
            None => {
                let mut launch = self.stream.launch_builder(self.f);
                for p in ptrs {
                    launch.arg(p);
                }
                launch.arg(&seq);
                // SAFETY: the callers pass the kernel's arguments in its order; the grid has at
                // most one block per multiprocessor, each of which fits (checked by `Plan::new`).
                unsafe { launch.launch_cooperative(self.cfg) }.map_err(err)?;
                return Ok(());
            }
        };
        let (mut values, mut seq) = (ptrs.to_vec(), seq);
        let mut params = params(&mut values, &mut seq);
        self.stream.context().bind_to_thread().map_err(err)?;
        // SAFETY: as above; `params` points at `values` and `seq`, alive through the call, and
        // `side` is a stream of this context (`side::Fork`).
        unsafe {
            result::launch_cooperative_kernel(
                self.f.cu_function(),
                self.cfg.grid_dim,
                self.cfg.block_dim,
                self.cfg.shared_mem_bytes,
                side,
                &mut params,
            )
        }
        .map_err(err)
    }

    /// The driver's launch configuration in clusters, `attrs` its attributes: [cluster
    /// dimension, cooperative], of which it names the first only (the occupancy query takes no
    /// more).
    fn cluster_config(&self, attrs: &mut [sys::CUlaunchAttribute; 2]) -> sys::CUlaunchConfig {
        attrs[0].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[0].value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
            x: self.cluster as u32,
            y: 1,
            z: 1,
        };
        attrs[1].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attrs[1].value.cooperative = 1;
        sys::CUlaunchConfig {
            gridDimX: self.cfg.grid_dim.0,
            gridDimY: self.cfg.grid_dim.1,
            gridDimZ: 1,
            blockDimX: self.cfg.block_dim.0,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: self.cfg.shared_mem_bytes,
            hStream: self.side.unwrap_or_else(|| self.stream.cu_stream()),
            attrs: attrs.as_mut_ptr(),
            numAttrs: 1,
        }
    }

    /// Whether two grids of this launch fit on the GPU at once (a bidirectional layer's two
    /// directions side by side, `units.rs`): in clusters, twice its clusters among those the GPU
    /// holds at once (a cluster's blocks share a GPC: clusters of 16 blocks that each take a
    /// multiprocessor's shared memory fit one a GPC); else twice its blocks on `sms`
    /// multiprocessors, one a multiprocessor.
    pub fn fits_twice(&self, sms: usize) -> Result<bool> {
        let blocks = (self.cfg.grid_dim.0 * self.cfg.grid_dim.1) as usize;
        match self.cluster {
            1 => Ok(2 * blocks <= sms),
            c => Ok(2 * blocks.div_ceil(c) <= self.resident_clusters()?),
        }
    }

    /// How many clusters of the kernel (with `cfg`'s block and shared memory sizes) the GPU
    /// holds at once.
    pub fn resident_clusters(&self) -> Result<usize> {
        let mut attrs: [sys::CUlaunchAttribute; 2] = unsafe { std::mem::zeroed() };
        let config = self.cluster_config(&mut attrs);
        self.stream.context().bind_to_thread().map_err(err)?;
        let mut fits = 0i32;
        // SAFETY: `config` and its one attribute are live; `f` is a loaded kernel.
        unsafe {
            sys::cuOccupancyMaxActiveClusters(&mut fits, self.f.cu_function(), &config).result()
        }
        .map_err(|e| err(format!("cluster occupancy: {e}")))?;
        Ok(fits.max(0) as usize)
    }

    /// How many clusters of the kernel the GPU holds at once with each block on a multiprocessor of
    /// its own: [`Launch::resident_clusters`] with `whole_sm` bytes of shared memory a block, more
    /// than half a multiprocessor's (which the kernel must allow).
    pub fn alone_clusters(&self, whole_sm: usize) -> Result<usize> {
        let cfg = LaunchConfig {
            shared_mem_bytes: whole_sm as u32,
            ..self.cfg
        };
        Launch { cfg, ..*self }.resident_clusters()
    }

    /// [`Launch::cooperative`] in clusters.
    fn cooperative_clusters(&self, ptrs: &[u64], seq: i32) -> Result<()> {
        let (mut values, mut seq) = (ptrs.to_vec(), seq);
        let mut params = params(&mut values, &mut seq);
        // SAFETY: `params` points at the kernel's arguments in its order, alive meanwhile.
        unsafe { self.cooperative_params(&mut params) }
    }

    /// Launches the kernel in clusters of [`Launch::cluster`] blocks, every cluster resident at
    /// once, with the arguments `params` points at.
    ///
    /// # Safety
    /// `params` points at the kernel's arguments, in its order and of its types, alive until
    /// this returns (the driver copies them).
    pub unsafe fn cooperative_params(&self, params: &mut [*mut std::ffi::c_void]) -> Result<()> {
        let cluster = self.cluster;
        // Every cluster must be resident at once, as every block of a cooperative launch
        // (`Plan::new` has checked; a GPU shared with other work may hold fewer now).
        let fits = self.resident_clusters()?;
        let clusters = self.cfg.grid_dim.0 as usize / cluster * self.cfg.grid_dim.1 as usize;
        if fits < clusters {
            return Err(err(format!(
                "{clusters} clusters of {cluster} blocks, the GPU holds {fits} at once"
            )));
        }
        let mut attrs: [sys::CUlaunchAttribute; 2] = unsafe { std::mem::zeroed() };
        let mut config = self.cluster_config(&mut attrs);
        config.numAttrs = 2;
        let mut launch = |config: &sys::CUlaunchConfig| {
            // SAFETY: `params` as this function's caller promises; the grid is whole clusters,
            // all resident at once (checked above).
            unsafe {
                sys::cuLaunchKernelEx(
                    config,
                    self.f.cu_function(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
                .result()
            }
        };
        launch(&config).or_else(|cooperative| {
            // A driver that refuses the cooperative attribute with clusters: every cluster fits
            // at once (checked above), which is what the grid barrier needs (clusters that wait
            // for other work to leave the GPU start once it has).
            config.numAttrs = 1;
            launch(&config).map_err(|e| err(format!("{e} (cooperative: {cooperative})")))
        })
    }
}
