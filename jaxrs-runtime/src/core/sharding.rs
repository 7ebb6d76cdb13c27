//! How a concrete array lies on devices: [`Sharding`] (one device, replicas, or a [`Mesh`] with
//! a [`PartitionSpec`]), [`device_put`] to lay an array out, and the gathering that reads one
//! back.
//!
//! Shards follow JAX's `NamedSharding`: each array dimension named by the spec is split
//! evenly over the product of its mesh axes (the first axis listed is the major one), and the
//! array is replicated over the mesh axes the spec does not mention. One buffer per mesh
//! device, in the mesh's row-major device order.
//!
//! A `jit` with shardings, or given arrays with named shardings, runs one SPMD program over
//! their mesh (pjit, `transforms/jit.rs`), and so does an eager op on such arrays
//! (`core/eager.rs`; both through `core/spmd.rs`). An eager op or a `jit` whose arguments name
//! no mesh runs on one device: an input laid out any other way is first read onto that device
//! ([`Array::on_device`]).

use crate::aval::Aval;
use crate::core::array::{Array, Concrete, Repr};
use crate::core::client::{client, fail};
use crate::core::trace::At;
use crate::error::Error;
use crate::error::Result;
use crate::pjrt::{Buffer, Device};
use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

pub(crate) use crate::mesh::sharding_error;
pub use crate::mesh::{AxisType, Mesh, NamedSharding, PartitionDim, PartitionSpec};

impl NamedSharding {
    /// The shape of each shard of an array of `shape`; errors as [`device_put`] would.
    pub fn shard_shape(&self, shape: &[usize]) -> Result<Vec<usize>> {
        Sharding::Named(self.clone()).shard_shape(shape)
    }
}

impl NamedSharding {
    /// The sharding over `mesh` that lays an array of rank `rank` out as XLA's `op` does
    /// (partition `i` being the mesh's `i`-th device), trailing unsplit dimensions left out
    /// of the spec. `None` when no partition spec over the mesh's axes gives that layout.
    pub(crate) fn from_op_sharding(
        mesh: &Mesh,
        rank: usize,
        op: &crate::pjrt::OpSharding,
    ) -> Option<NamedSharding> {
        use crate::pjrt::OpSharding;
        let (dims, devices) = match op {
            OpSharding::Replicated => {
                return NamedSharding::new(mesh.clone(), PartitionSpec::default()).ok()
            }
            OpSharding::Tiled { dims, devices } => (dims, devices),
            _ => return None,
        };
        let n = mesh.size();
        if dims.len() < rank || devices.len() != n {
            return None;
        }
        let tiles: Vec<usize> = dims
            .iter()
            .map(|&d| usize::try_from(d).ok())
            .collect::<Option<_>>()?;
        // Each partition's tile coordinates along the array's dimensions.
        let mut tile_of: Vec<Option<Vec<usize>>> = vec![None; n];
        for (flat, &device) in devices.iter().enumerate() {
            let mut rest = flat;
            let mut coords = vec![0; tiles.len()];
            for (c, &t) in coords.iter_mut().zip(&tiles).rev() {
                *c = rest % t;
                rest /= t;
            }
            coords.truncate(rank);
            *tile_of.get_mut(usize::try_from(device).ok()?)? = Some(coords);
        }
        let tile_of: Vec<Vec<usize>> = tile_of.into_iter().collect::<Option<_>>()?;
        let coords: Vec<Vec<usize>> = (0..n).map(|p| mesh.coords(p)).collect();
        let mut used: Vec<usize> = Vec::new();
        let mut spec = Vec::with_capacity(rank);
        for (d, &count) in tiles.iter().enumerate().take(rank) {
            if count == 1 {
                spec.push(PartitionDim::Replicated);
                continue;
            }
            let axes = find_axes(
                mesh,
                &coords,
                &tile_of,
                d,
                count,
                &mut used,
                &mut Vec::new(),
            )?;
            spec.push(PartitionDim::Axes(
                axes.iter().map(|&a| mesh.axis_names[a].clone()).collect(),
            ));
        }
        while spec.last() == Some(&PartitionDim::Replicated) {
            spec.pop();
        }
        NamedSharding::new(mesh.clone(), PartitionSpec::new(spec)).ok()
    }
}

/// An ordered list of unused mesh axes (of size > 1) whose pieces, major first, give every
/// partition the tile coordinate `tile_of[p][d]` along dimension `d` split into `tiles`.
fn find_axes(
    mesh: &Mesh,
    coords: &[Vec<usize>],
    tile_of: &[Vec<usize>],
    d: usize,
    tiles: usize,
    used: &mut Vec<usize>,
    chosen: &mut Vec<usize>,
) -> Option<Vec<usize>> {
    let pieces: usize = chosen.iter().map(|&a| mesh.shape[a]).product();
    if pieces == tiles {
        let fits = coords.iter().zip(tile_of).all(|(c, t)| {
            chosen
                .iter()
                .fold(0, |piece, &a| piece * mesh.shape[a] + c[a])
                == t[d]
        });
        if fits {
            used.extend(chosen.iter().copied());
            return Some(chosen.clone());
        }
        return None;
    }
    for a in 0..mesh.shape.len() {
        let size = mesh.shape[a];
        if size == 1
            || used.contains(&a)
            || chosen.contains(&a)
            || !tiles.is_multiple_of(pieces * size)
        {
            continue;
        }
        chosen.push(a);
        if let Some(found) = find_axes(mesh, coords, tile_of, d, tiles, used, chosen) {
            return Some(found);
        }
        chosen.pop();
    }
    None
}

/// How a concrete array lies on devices: whole on one device, whole on each of several
/// (replicated), or split over a mesh ([`NamedSharding`]). Its buffers follow
/// [`Sharding::devices`]' order.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{Mesh, NamedSharding, Sharding, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let devices = jaxrs::devices();
/// let x = Array::arange(0.0, 16.0, 1.0, DType::F32).reshape(&[4, 4]);
/// assert_eq!(x.sharding(), Some(&Sharding::SingleDevice(devices[0])));
///
/// let replicated = jaxrs::device_put(&x, Sharding::Replicated(devices[..2].to_vec()));
/// assert_eq!(replicated.addressable_shards().len(), 2);
///
/// let mesh = Mesh::new(&devices, &[2, 4], &["dp", "mp"])?;
/// let s = Sharding::from(NamedSharding::new(mesh, P!["dp"])?);
/// assert_eq!(s.shard_shape(&[4, 4])?, vec![2, 4]);
/// assert_eq!(s.devices().len(), 8);
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Sharding {
    /// The whole array on one device.
    SingleDevice(Device),
    /// The whole array on each of these devices (at least one, none twice).
    Replicated(Vec<Device>),
    /// Split over a mesh as a partition spec says.
    Named(NamedSharding),
}

impl From<Device> for Sharding {
    fn from(d: Device) -> Sharding {
        Sharding::SingleDevice(d)
    }
}

impl From<NamedSharding> for Sharding {
    fn from(s: NamedSharding) -> Sharding {
        Sharding::Named(s)
    }
}

impl fmt::Display for Sharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sharding::SingleDevice(d) => write!(f, "SingleDeviceSharding({d})"),
            Sharding::Replicated(ds) => write!(f, "Replicated({ds:?})"),
            Sharding::Named(n) => fmt::Display::fmt(n, f),
        }
    }
}

impl fmt::Debug for Sharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Sharding {
    /// The devices holding a piece (or a copy) of the array, one per buffer.
    pub fn devices(&self) -> &[Device] {
        match self {
            Sharding::SingleDevice(d) => std::slice::from_ref(d),
            Sharding::Replicated(ds) => ds,
            Sharding::Named(n) => n.mesh.devices(),
        }
    }

    /// The shape of each shard of an array of `shape` (every shard has the same shape, since
    /// splits are even). Errors as [`device_put`] would.
    pub fn shard_shape(&self, shape: &[usize]) -> Result<Vec<usize>> {
        let indices = self.device_indices(shape)?;
        Ok(indices[0].iter().map(|r| r.len()).collect())
    }

    /// Each device's index ranges into an array of `shape`, in [`Sharding::devices`]' order.
    pub(crate) fn device_indices(&self, shape: &[usize]) -> Result<Vec<Vec<Range<usize>>>> {
        let whole: Vec<Range<usize>> = shape.iter().map(|&n| 0..n).collect();
        match self {
            Sharding::SingleDevice(_) => Ok(vec![whole]),
            Sharding::Replicated(ds) => {
                if ds.is_empty() {
                    return Err(sharding_error(
                        "a replicated sharding needs at least one device",
                    ));
                }
                for (i, d) in ds.iter().enumerate() {
                    if ds[..i].contains(d) {
                        return Err(sharding_error(format!(
                            "a replicated sharding lists {d} twice"
                        )));
                    }
                }
                Ok(vec![whole; ds.len()])
            }
            Sharding::Named(n) => {
                let dims = n.spec.dims();
                if dims.len() > shape.len() {
                    return Err(sharding_error(format!(
                        "{} has {} entries but the array has rank {} (shape {shape:?})",
                        n.spec,
                        dims.len(),
                        shape.len()
                    )));
                }
                for (d, (dim, &size)) in dims.iter().zip(shape).enumerate() {
                    let pieces = n.pieces(dim);
                    if size % pieces != 0 {
                        let PartitionDim::Axes(axes) = dim else {
                            unreachable!("an unsplit dimension is one piece")
                        };
                        let over = if axes.len() == 1 {
                            format!("mesh axis {}", n.mesh.axes_str(axes))
                        } else {
                            format!("mesh axes ({}), {pieces} pieces", n.mesh.axes_str(axes))
                        };
                        return Err(sharding_error(format!(
                            "dimension {d} of size {size} does not split evenly over {over} \
                             (shape {shape:?}, {})",
                            n.spec
                        )));
                    }
                }
                Ok((0..n.mesh.size())
                    .map(|flat| {
                        let coords = n.mesh.coords(flat);
                        let mut index = whole.clone();
                        for (range, dim) in index.iter_mut().zip(dims) {
                            let PartitionDim::Axes(axes) = dim else {
                                continue;
                            };
                            // Mixed radix over the listed axes, the first major.
                            let mut piece = 0;
                            for a in axes {
                                let ax = n.mesh.axis_index(a).expect("validated");
                                piece = piece * n.mesh.shape[ax] + coords[ax];
                            }
                            let chunk = range.len() / n.pieces(dim);
                            *range = piece * chunk..(piece + 1) * chunk;
                        }
                        index
                    })
                    .collect())
            }
        }
    }
}

/// One device's piece of an array (like JAX's `Shard`).
#[derive(Clone, Debug)]
pub struct Shard {
    /// The device holding it.
    pub device: Device,
    /// Its range along each dimension of the whole array.
    pub index: Vec<Range<usize>>,
    /// Which copy of this piece it is: 0 for the first device holding it, 1 for the next...
    pub replica_id: usize,
    /// The piece itself, as an array on `device` (sharing the buffer, not copying it).
    pub data: Array,
}

/// Lays `x` out on devices as `sharding` says, one buffer per device (like
/// `jax.device_put(x, sharding)`). `x` may be on any device or sharded any way: a piece it
/// already holds on the target device is shared, one it holds on another device is copied
/// device to device, and other pieces are cut from a host copy.
///
/// Panics with a message naming the problem when the sharding does not fit the array (an
/// uneven split, a spec longer than the array's rank); [`try_device_put`] returns those as
/// [`Error::Sharding`].
///
/// A `jit` given arrays with named shardings runs SPMD over their mesh and keeps its results
/// sharded (pjit), and so does an eager op (`&xs + 1.0` keeps `xs`'s sharding).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{Mesh, NamedSharding, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
/// let x = Array::arange(0.0, 32.0, 1.0, DType::F32).reshape(&[4, 8]);
/// let xs = jaxrs::device_put(&x, NamedSharding::new(mesh, P!["dp", "mp"])?);
///
/// let shards = xs.addressable_shards();
/// assert_eq!(shards.len(), 8);
/// assert_eq!(shards[5].index, vec![2..4, 2..4]); // mesh position (1, 1)
/// assert_eq!(shards[5].data.to_vec::<f32>(), vec![18.0, 19.0, 26.0, 27.0]);
/// assert_eq!(xs.to_vec::<f32>(), x.to_vec::<f32>()); // gathers
/// assert_eq!((&xs * 2.0).sum(None, false).item::<f32>(), 992.0); // eager: on one device
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[track_caller]
pub fn device_put(x: &Array, sharding: impl Into<Sharding>) -> Array {
    let loc = std::panic::Location::caller();
    match try_device_put(x, sharding) {
        Ok(a) => a,
        Err(Error::Sharding(m)) => panic!("device_put: {m} {}", At::line(loc)),
        Err(e) => fail(e),
    }
}

/// [`device_put`], returning a sharding that does not fit the array, and device failures,
/// as errors.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{Mesh, NamedSharding, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
/// let x = Array::zeros(&[6, 4], DType::F32);
/// let err = jaxrs::try_device_put(&x, NamedSharding::new(mesh, P![None, "dp", "mp"])?);
/// assert_eq!(
///     err.unwrap_err().to_string(),
///     "PartitionSpec(None, 'dp', 'mp') has 3 entries but the array has rank 2 (shape [6, 4])"
/// );
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[track_caller]
pub fn try_device_put(x: &Array, sharding: impl Into<Sharding>) -> Result<Array> {
    let sharding = sharding.into();
    let c = x.concrete("device_put");
    let indices = sharding.device_indices(&c.aval.shape)?;
    if c.sharding == sharding {
        return Ok(x.clone());
    }
    let held = c.sharding.device_indices(&c.aval.shape)?;
    let client = client();
    let elem = c.aval.dtype.size_in_bytes();
    let mut host: Option<Vec<u8>> = None;
    let mut buffers = Vec::with_capacity(indices.len());
    for (device, index) in sharding.devices().iter().zip(&indices) {
        // The same piece already on this device is shared, on another device copied over;
        // only a piece that `x` does not hold whole is cut from the host copy.
        let mut same = held
            .iter()
            .zip(c.sharding.devices())
            .zip(&c.buffers)
            .filter(|((held, _), _)| *held == index);
        let buffer = if let Some((_, b)) = same.clone().find(|((_, d), _)| *d == device) {
            b.clone()
        } else if let Some((_, b)) = same.next() {
            Arc::new(b.copy_to_device(device)?)
        } else {
            if host.is_none() {
                host = Some(x.host_bytes()?);
            }
            let whole = host.as_deref().expect("just filled");
            let block = copy_block(whole, &c.aval.shape, index, elem);
            let dims: Vec<i64> = index.iter().map(|r| r.len() as i64).collect();
            Arc::new(client.buffer_from_host(&block, c.aval.dtype, &dims, device)?)
        };
        buffers.push(buffer);
    }
    Ok(Array(Arc::new(Repr::Concrete(Concrete {
        aval: c.aval.clone(),
        buffers,
        sharding,
        literal: None,
    }))))
}

impl Array {
    /// The pieces of a concrete array, one per device holding one, in
    /// [`Sharding::devices`]' order (like JAX's `x.addressable_shards`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::{Mesh, NamedSharding, P};
    ///
    /// jaxrs::set_cpu_device_count(8)?;
    /// let mesh = Mesh::new(&jaxrs::devices()[..2], &[2], &["dp"])?;
    /// let x = Array::from_vec(vec![1i32, 2, 3, 4], &[4]);
    /// let xs = jaxrs::device_put(&x, NamedSharding::new(mesh, P!["dp"])?);
    /// let shards = xs.addressable_shards();
    /// assert_eq!(shards[1].device, jaxrs::devices()[1]);
    /// assert_eq!(shards[1].index, vec![2..4]);
    /// assert_eq!(shards[1].data.to_vec::<i32>(), vec![3, 4]);
    /// # Ok::<(), jaxrs::Error>(())
    /// ```
    #[track_caller]
    pub fn addressable_shards(&self) -> Vec<Shard> {
        let c = self.concrete("addressable_shards");
        let indices = c
            .sharding
            .device_indices(&c.aval.shape)
            .expect("a concrete array's sharding fits it");
        let mut shards: Vec<Shard> = Vec::with_capacity(indices.len());
        for ((device, index), buffer) in c.sharding.devices().iter().zip(indices).zip(&c.buffers) {
            let replica_id = shards.iter().filter(|s| s.index == index).count();
            let data = if c.buffers.len() == 1 {
                self.clone()
            } else {
                let aval = Aval {
                    shape: index.iter().map(|r| r.len()).collect(),
                    ..c.aval.clone()
                };
                Array::from_shared_buffer(buffer.clone(), aval, *device)
            };
            shards.push(Shard {
                device: *device,
                index,
                replica_id,
                data,
            });
        }
        shards
    }

    /// This array as a whole on `device`: itself when it already is, a buffer it already holds
    /// there when it is replicated, a device-to-device copy of a whole copy it holds
    /// elsewhere, else gathered through the host and uploaded.
    ///
    /// Single-device programs (eager ops, a jit whose arguments name no mesh) take every
    /// argument through here.
    pub(crate) fn on_device(&self, device: Device) -> Cow<'_, Array> {
        let c = self.concrete("on_device");
        if c.sharding == Sharding::SingleDevice(device) {
            return Cow::Borrowed(self);
        }
        // The buffers holding the whole array (replicas), with their devices.
        let indices = c.sharding.device_indices(&c.aval.shape).unwrap_or_default();
        let wholes: Vec<(&Device, &Arc<Buffer>)> = c
            .sharding
            .devices()
            .iter()
            .zip(&indices)
            .zip(&c.buffers)
            .filter(|((_, index), _)| index.iter().zip(&c.aval.shape).all(|(r, &n)| r.len() == n))
            .map(|((d, _), b)| (d, b))
            .collect();
        if let Some((_, b)) = wholes.iter().find(|(d, _)| **d == device) {
            return Cow::Owned(Array::from_shared_buffer(
                Arc::clone(b),
                c.aval.clone(),
                device,
            ));
        }
        if let Some((_, b)) = wholes.first() {
            let copy = b.copy_to_device(&device).unwrap_or_else(|e| fail(e));
            return Cow::Owned(Array::from_buffer(copy, c.aval.clone(), device));
        }
        let bytes = self.host_bytes().unwrap_or_else(|e| fail(e));
        let dims: Vec<i64> = c.aval.shape.iter().map(|&d| d as i64).collect();
        let b = client()
            .buffer_from_host(&bytes, c.aval.dtype, &dims, &device)
            .unwrap_or_else(|e| fail(e));
        Cow::Owned(Array::from_buffer(b, c.aval.clone(), device))
    }

    /// The whole array's bytes in row-major order, gathered from its shards.
    pub(crate) fn host_bytes(&self) -> Result<Vec<u8>> {
        let c = self.concrete("reading values");
        let mut span = crate::core::profile::span("transfer", "download", || c.aval.to_string());
        span.arg("bytes", || c.aval.size_in_bytes().to_string());
        let mut bytes = vec![0u8; c.aval.size_in_bytes()];
        if bytes.is_empty() {
            return Ok(bytes);
        }
        if c.buffers.len() == 1 || !matches!(c.sharding, Sharding::Named(_)) {
            c.buffers[0].copy_to_host(&mut bytes)?;
            return Ok(bytes);
        }
        let indices = c.sharding.device_indices(&c.aval.shape)?;
        let elem = c.aval.dtype.size_in_bytes();
        let mut done: Vec<&Vec<Range<usize>>> = Vec::new();
        for (index, buffer) in indices.iter().zip(&c.buffers) {
            if done.contains(&index) {
                continue;
            }
            let size: usize = index.iter().map(|r| r.len()).product();
            let mut block = vec![0u8; size * elem];
            buffer.copy_to_host(&mut block)?;
            paste_block(&mut bytes, &c.aval.shape, index, &block, elem);
            done.push(index);
        }
        Ok(bytes)
    }

    fn from_shared_buffer(buffer: Arc<Buffer>, aval: Aval, device: Device) -> Array {
        Array(Arc::new(Repr::Concrete(Concrete {
            aval,
            buffers: vec![buffer],
            sharding: Sharding::SingleDevice(device),
            literal: None,
        })))
    }
}

impl Array {
    /// An array held as `buffers`, one per device of `sharding` in its order.
    pub(crate) fn from_shards(buffers: Vec<Buffer>, aval: Aval, sharding: Sharding) -> Array {
        Array(Arc::new(Repr::Concrete(Concrete {
            aval,
            buffers: buffers.into_iter().map(Arc::new).collect(),
            sharding,
            literal: None,
        })))
    }

    /// An array held as `buffers` (shared, not copied), one per device of `sharding` in its
    /// order.
    pub(crate) fn from_shared_shards(
        buffers: Vec<Arc<Buffer>>,
        aval: Aval,
        sharding: Sharding,
    ) -> Array {
        Array(Arc::new(Repr::Concrete(Concrete {
            aval,
            buffers,
            sharding,
            literal: None,
        })))
    }

    /// Is this concrete array laid out exactly as `sharding` says?
    pub(crate) fn is_laid_out_as(&self, sharding: &NamedSharding) -> bool {
        matches!(&self.concrete("jit").sharding, Sharding::Named(n) if n == sharding)
    }
}

thread_local! {
    /// The meshes entered on this thread, innermost last (JAX's `with mesh:`).
    static MESH_SCOPE: RefCell<Vec<Mesh>> = const { RefCell::new(Vec::new()) };
    /// The meshes `with_sharding_constraint` named while a jit traced its function.
    static TRACED_MESHES: RefCell<Option<Vec<Mesh>>> = const { RefCell::new(None) };
}

/// While alive, makes its [`Mesh`] the one bare [`PartitionSpec`]s refer to (in `jit`'s
/// shardings and in [`with_sharding_constraint`](crate::with_sharding_constraint)), like JAX's
/// `with mesh:`. Made by [`Mesh::enter`]; scopes nest, and a guard belongs to its thread.
#[must_use = "the mesh is in scope only while the guard is alive"]
pub struct MeshGuard {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for MeshGuard {
    fn drop(&mut self) {
        MESH_SCOPE.with(|m| m.borrow_mut().pop());
    }
}

impl Mesh {
    /// Puts this mesh in scope until the guard drops (JAX's `with mesh:`): jitted functions
    /// and sharding constraints may then name shardings by bare [`PartitionSpec`]s.
    ///
    /// ```
    /// use jaxrs::{Mesh, P};
    ///
    /// jaxrs::set_cpu_device_count(8)?;
    /// let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
    /// assert_eq!(Mesh::current(), None);
    /// {
    ///     let _m = mesh.enter();
    ///     assert_eq!(Mesh::current(), Some(mesh.clone()));
    /// }
    /// assert_eq!(Mesh::current(), None);
    /// # Ok::<(), jaxrs::Error>(())
    /// ```
    pub fn enter(&self) -> MeshGuard {
        MESH_SCOPE.with(|m| m.borrow_mut().push(self.clone()));
        MeshGuard {
            _not_send: std::marker::PhantomData,
        }
    }

    /// The innermost mesh entered on this thread ([`Mesh::enter`]), if any.
    pub fn current() -> Option<Mesh> {
        MESH_SCOPE.with(|m| m.borrow().last().cloned())
    }
}

/// Records that the function being traced constrains a value to `mesh` (read by jit).
pub(crate) fn note_traced_mesh(mesh: &Mesh) {
    TRACED_MESHES.with(|t| {
        if let Some(seen) = t.borrow_mut().as_mut() {
            if !seen.iter().any(|m| m.same_grid(mesh)) {
                seen.push(mesh.clone());
            }
        }
    });
}

/// Runs `f` (a trace), returning the meshes the sharding constraints in it named.
pub(crate) fn collect_traced_meshes<R>(f: impl FnOnce() -> R) -> (R, Vec<Mesh>) {
    let outer = TRACED_MESHES.with(|t| t.replace(Some(Vec::new())));
    struct Restore(Option<Option<Vec<Mesh>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take().expect("restored once");
            TRACED_MESHES.with(|t| {
                let inner = t.replace(outer);
                // A jit traced inside another's trace: its constraints belong to both.
                if let (Some(inner), Some(outer)) = (inner, t.borrow_mut().as_mut()) {
                    for m in inner {
                        if !outer.iter().any(|o| o.same_grid(&m)) {
                            outer.push(m);
                        }
                    }
                }
            });
        }
    }
    let restore = Restore(Some(outer));
    let r = f();
    let seen = TRACED_MESHES.with(|t| t.borrow().clone().unwrap_or_default());
    drop(restore);
    (r, seen)
}

/// How `jit` lays out its arguments or results, as a prefix of their tree (JAX's
/// `in_shardings` / `out_shardings`): one entry for a whole subtree, or one per child.
///
/// Built with `.into()` from a [`PartitionSpec`] (resolved against the jit's mesh or the mesh
/// in scope), a [`NamedSharding`], `None` (unspecified: an argument keeps the sharding it
/// has, a result lies as XLA's propagation chose), or a tuple or `Vec` of those (one per child:
/// tuple elements, `Vec` elements, struct fields in order).
///
/// ```
/// use jaxrs::{Shardings, P};
///
/// let s: Shardings = (P!["dp", None], P![None, "mp"]).into();
/// assert_eq!(
///     s,
///     Shardings::PerChild(vec![Shardings::Spec(P!["dp", None]), Shardings::Spec(P![None, "mp"])])
/// );
/// let unspecified: Shardings = None::<jaxrs::PartitionSpec>.into();
/// assert_eq!(unspecified, Shardings::Unspecified);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Shardings {
    /// Not given: arguments keep theirs, results lie as XLA's sharding propagation chose.
    #[default]
    Unspecified,
    /// A spec over the jit's mesh (or the mesh in scope), for every leaf below.
    Spec(PartitionSpec),
    /// A sharding for every leaf below.
    Named(NamedSharding),
    /// One entry per child of this node.
    PerChild(Vec<Shardings>),
}

impl From<PartitionSpec> for Shardings {
    fn from(s: PartitionSpec) -> Shardings {
        Shardings::Spec(s)
    }
}

impl From<NamedSharding> for Shardings {
    fn from(s: NamedSharding) -> Shardings {
        Shardings::Named(s)
    }
}

impl From<&NamedSharding> for Shardings {
    fn from(s: &NamedSharding) -> Shardings {
        Shardings::Named(s.clone())
    }
}

impl<T: Into<Shardings>> From<Option<T>> for Shardings {
    fn from(s: Option<T>) -> Shardings {
        s.map_or(Shardings::Unspecified, Into::into)
    }
}

impl<T: Into<Shardings>> From<Vec<T>> for Shardings {
    fn from(s: Vec<T>) -> Shardings {
        Shardings::PerChild(s.into_iter().map(Into::into).collect())
    }
}

macro_rules! shardings_tuple {
    ($($t:ident),+) => {
        impl<$($t: Into<Shardings>),+> From<($($t,)+)> for Shardings {
            #[allow(non_snake_case)]
            fn from(($($t,)+): ($($t,)+)) -> Shardings {
                Shardings::PerChild(vec![$($t.into()),+])
            }
        }
    };
}
shardings_tuple!(A);
shardings_tuple!(A, B);
shardings_tuple!(A, B, C);
shardings_tuple!(A, B, C, D);
shardings_tuple!(A, B, C, D, E);
shardings_tuple!(A, B, C, D, E, F);
shardings_tuple!(A, B, C, D, E, F, G);
shardings_tuple!(A, B, C, D, E, F, G, H);

impl From<()> for Shardings {
    fn from((): ()) -> Shardings {
        Shardings::PerChild(Vec::new())
    }
}

/// Calls `row(offset_in_whole, offset_in_block, len)` (in elements) for each contiguous
/// innermost row of the block `index` of a row-major array of `shape`.
fn for_each_row(shape: &[usize], index: &[Range<usize>], mut row: impl FnMut(usize, usize, usize)) {
    let Some((last, outer)) = index.split_last() else {
        row(0, 0, 1); // a scalar is one element
        return;
    };
    let size: usize = index.iter().map(|r| r.len()).product();
    if size == 0 {
        return;
    }
    let mut strides = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    let mut pos: Vec<usize> = outer.iter().map(|r| r.start).collect();
    let mut in_block = 0;
    loop {
        let offset: usize =
            pos.iter().zip(&strides).map(|(p, s)| p * s).sum::<usize>() + last.start;
        row(offset, in_block, last.len());
        in_block += last.len();
        // Odometer over the outer dimensions.
        let mut d = pos.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            pos[d] += 1;
            if pos[d] < outer[d].end {
                break;
            }
            pos[d] = outer[d].start;
        }
    }
}

/// The bytes of the block `index` of a row-major array of `shape` held in `whole`.
fn copy_block(whole: &[u8], shape: &[usize], index: &[Range<usize>], elem: usize) -> Vec<u8> {
    let size: usize = index.iter().map(|r| r.len()).product();
    let mut out = vec![0u8; size * elem];
    for_each_row(shape, index, |from, to, len| {
        out[to * elem..(to + len) * elem].copy_from_slice(&whole[from * elem..(from + len) * elem]);
    });
    out
}

/// Writes `block` into the block `index` of the row-major array of `shape` held in `whole`.
fn paste_block(
    whole: &mut [u8],
    shape: &[usize],
    index: &[Range<usize>],
    block: &[u8],
    elem: usize,
) {
    for_each_row(shape, index, |to, from, len| {
        whole[to * elem..(to + len) * elem]
            .copy_from_slice(&block[from * elem..(from + len) * elem]);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip() {
        let shape = [3, 4, 2];
        let whole: Vec<u8> = (0..24).collect();
        let index = vec![1..3, 2..4, 0..2];
        let block = copy_block(&whole, &shape, &index, 1);
        assert_eq!(block, vec![12, 13, 14, 15, 20, 21, 22, 23]);
        let mut back = vec![0u8; 24];
        paste_block(&mut back, &shape, &index, &block, 1);
        assert_eq!(&back[12..16], &[12, 13, 14, 15]);
        assert_eq!(&back[20..24], &[20, 21, 22, 23]);
        assert_eq!(copy_block(&[7, 0], &[], &[], 2), vec![7, 0]);
        assert!(copy_block(&[], &[0, 3], &[0..0, 0..3], 4).is_empty());
    }
}
