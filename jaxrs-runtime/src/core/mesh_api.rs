//! JAX's current way to make and scope meshes: [`make_mesh`] (devices ordered as JAX picks
//! them), [`set_mesh`] / [`use_mesh`] (the mesh bare [`PartitionSpec`]s refer to, which
//! `with mesh:` and [`Mesh::enter`] set in older code), [`get_mesh`] and
//! [`get_abstract_mesh`]; and the arrays assembled from per-device pieces
//! ([`make_array_from_callback`], [`make_array_from_single_device_arrays`],
//! [`make_array_from_process_local_data`]).
//!
//! Mesh axes are of JAX's [`AxisType`]s. [`make_mesh`] makes `Auto` axes, whose shardings
//! inside a `jit` XLA propagates, where JAX 0.10's `make_mesh` makes `Explicit` ones by
//! default: a port of code written for explicit axes says so with
//! [`Mesh::with_axis_types`]. Over `Explicit` axes, shardings are part of the types
//! (`crate::core::sharding_types`).
//!
//! [`PartitionSpec`]: crate::core::sharding::PartitionSpec

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::client::{devices, fail};
use crate::core::sharding::{AxisType, Mesh, MeshGuard, Sharding};
use crate::core::trace::{is_tracing, At};
use crate::error::{Error, Result};
use crate::mesh::write_mesh;
use crate::pjrt::Device;
use std::fmt;
use std::ops::Range;

/// A mesh of the run's devices with these axis sizes and names, the devices in the order JAX's
/// `jax.make_mesh` puts them: on CPU and GPU plugins the first `product(axis_shapes)` devices
/// of [`devices`], row-major over the axes (JAX reorders only for TPU topologies).
///
/// Errors ([`Error::Sharding`]) as JAX's: more devices asked for than there are, or what
/// [`Mesh::new`] refuses (names and sizes of different lengths, a repeated or empty name).
///
/// ```
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?;
/// assert_eq!(mesh.to_string(), "Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto))");
/// assert_eq!(mesh.devices(), &jaxrs::devices()[..]);
/// // A smaller mesh takes the first devices.
/// assert_eq!(jaxrs::make_mesh(&[2, 3], &["a", "b"])?.devices(), &jaxrs::devices()[..6]);
/// let err = jaxrs::make_mesh(&[4, 4], &["a", "b"]).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "make_mesh: the number of devices (8) must be >= the product of the mesh shape [4, 4]"
/// );
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn make_mesh(axis_shapes: &[usize], axis_names: &[&str]) -> Result<Mesh> {
    make_mesh_from(axis_shapes, axis_names, &devices())
}

/// [`make_mesh`] over the given devices (JAX's `make_mesh(..., devices=...)`): the first
/// `product(axis_shapes)` of them, in the order given.
pub fn make_mesh_from(
    axis_shapes: &[usize],
    axis_names: &[&str],
    devices: &[Device],
) -> Result<Mesh> {
    let size: usize = axis_shapes.iter().product();
    if size > devices.len() {
        return Err(Error::Sharding(format!(
            "make_mesh: the number of devices ({}) must be >= the product of the mesh shape \
             {axis_shapes:?}",
            devices.len()
        )));
    }
    Mesh::new(&devices[..size], axis_shapes, axis_names)
}

/// Makes `mesh` the one bare `PartitionSpec`s refer to until the guard drops, as JAX 0.10's
/// `jax.set_mesh(mesh)` does: in `jit`'s shardings, in
/// [`with_sharding_constraint`](crate::with_sharding_constraint), and for
/// [`get_mesh`] / [`get_abstract_mesh`]. Scopes nest; a guard belongs to its thread. JAX's
/// `set_mesh` used as a global setter (not as a context manager) is this with the guard kept
/// for the rest of the program. [`Mesh::enter`] is the older spelling (`with mesh:`).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{Shardings, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?;
/// let _mesh = jaxrs::set_mesh(&mesh);
/// assert_eq!(jaxrs::get_mesh(), Some(mesh.clone()));
/// // A bare spec now means a NamedSharding over that mesh.
/// let double = jit(|x: Array| x * 2.0).in_shardings(P!["dp", "mp"]);
/// let y: Array = double.call(Array::ones(&[4, 8], DType::F32));
/// assert_eq!(y.addressable_shards()[5].index, vec![2..4, 2..4]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn set_mesh(mesh: &Mesh) -> MeshGuard {
    mesh.enter()
}

/// The same as [`set_mesh`], under the name JAX used for the context-manager form before
/// `set_mesh` took it over (`jax.sharding.use_mesh`, which JAX 0.10 no longer has).
pub fn use_mesh(mesh: &Mesh) -> MeshGuard {
    mesh.enter()
}

/// The mesh in scope ([`set_mesh`], [`use_mesh`] or [`Mesh::enter`]), if any (JAX's
/// `jax.sharding.get_mesh`, which returns an empty mesh where jaxrs returns `None`).
///
/// Panics inside a traced function, as JAX raises there: a trace sees only the abstract
/// mesh ([`get_abstract_mesh`]).
#[track_caller]
pub fn get_mesh() -> Option<Mesh> {
    if is_tracing() {
        panic!(
            "get_mesh can only be used outside of jit; maybe you want get_abstract_mesh() {}",
            At::line(std::panic::Location::caller())
        );
    }
    Mesh::current()
}

/// The axis names and sizes of the mesh in scope, without its devices (JAX's
/// `jax.sharding.get_abstract_mesh()`); empty when no mesh is in scope. It can be read
/// inside a traced function.
///
/// ```
/// jaxrs::set_cpu_device_count(8)?;
/// assert!(jaxrs::get_abstract_mesh().is_empty());
/// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?;
/// let _m = jaxrs::use_mesh(&mesh);
/// let abstract_mesh = jaxrs::get_abstract_mesh();
/// assert_eq!(abstract_mesh.axis_names(), &["dp", "mp"]);
/// assert_eq!(abstract_mesh.axis_sizes(), &[2, 4]);
/// assert_eq!(
///     abstract_mesh.to_string(),
///     "AbstractMesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto), device_kind=cpu, \
///      num_cores=None, platform=cpu)"
/// );
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn get_abstract_mesh() -> AbstractMesh {
    Mesh::current().map_or_else(AbstractMesh::default, |m| AbstractMesh::of(&m))
}

/// A mesh's axis names and sizes without its devices (JAX's `jax.sharding.AbstractMesh`):
/// what a traced function may know of the mesh it runs over, and the kind of device it runs
/// on when it was taken from a mesh.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AbstractMesh {
    axis_sizes: Vec<usize>,
    axis_names: Vec<String>,
    axis_types: Vec<AxisType>,
    abstract_device: Option<AbstractDevice>,
}

impl AbstractMesh {
    /// An abstract mesh of these axes, with no device (JAX's `AbstractMesh(axis_sizes,
    /// axis_names, axis_types)`; `None` types are Auto, as jaxrs's `make_mesh` makes them).
    ///
    /// ```
    /// use jaxrs::{AbstractMesh, AxisType};
    /// let m = AbstractMesh::new(&[2], &["x"], Some(&[AxisType::Explicit]));
    /// assert_eq!(m.to_string(), "AbstractMesh('x': 2, axis_types=(Explicit,))");
    /// assert_eq!(m.abstract_device(), None);
    /// ```
    #[track_caller]
    pub fn new(axis_sizes: &[usize], axis_names: &[&str], axis_types: Option<&[AxisType]>) -> Self {
        let types =
            axis_types.map_or_else(|| vec![AxisType::Auto; axis_names.len()], <[_]>::to_vec);
        if axis_sizes.len() != axis_names.len() || types.len() != axis_names.len() {
            panic!(
                "AbstractMesh: {} axis sizes, {} names and {} types {}",
                axis_sizes.len(),
                axis_names.len(),
                types.len(),
                At::line(std::panic::Location::caller())
            );
        }
        AbstractMesh {
            axis_sizes: axis_sizes.to_vec(),
            axis_names: axis_names.iter().map(|n| n.to_string()).collect(),
            axis_types: types,
            abstract_device: None,
        }
    }

    /// The abstract form of `mesh`, with its devices' kind.
    pub fn of(mesh: &Mesh) -> AbstractMesh {
        AbstractMesh {
            axis_sizes: mesh.shape().to_vec(),
            axis_names: mesh.axis_names().to_vec(),
            axis_types: mesh.axis_types().to_vec(),
            abstract_device: mesh.devices().first().map(AbstractDevice::of),
        }
    }

    /// The same mesh on devices of this kind (JAX's `abstract_device=`).
    pub fn with_abstract_device(mut self, device: AbstractDevice) -> AbstractMesh {
        self.abstract_device = Some(device);
        self
    }

    /// The kind of device a mesh taken from devices runs on (`None` for one built from axes
    /// only).
    pub fn abstract_device(&self) -> Option<&AbstractDevice> {
        self.abstract_device.as_ref()
    }

    /// The type of each axis.
    pub fn axis_types(&self) -> &[AxisType] {
        &self.axis_types
    }

    /// The size of each axis.
    pub fn axis_sizes(&self) -> &[usize] {
        &self.axis_sizes
    }

    /// The axes' names.
    pub fn axis_names(&self) -> &[String] {
        &self.axis_names
    }

    /// The number of devices a mesh of this shape has (1 for the empty mesh).
    pub fn size(&self) -> usize {
        self.axis_sizes.iter().product()
    }

    /// Whether no mesh is in scope (JAX's `mesh.empty`).
    pub fn is_empty(&self) -> bool {
        self.axis_names.is_empty()
    }
}

impl fmt::Display for AbstractMesh {
    /// As JAX 0.10.2 prints it: the axes, their types, then the device's description if any.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("AbstractMesh((), axis_types=())");
        }
        write_mesh(
            f,
            "AbstractMesh",
            &self.axis_names,
            &self.axis_sizes,
            &self.axis_types,
        )?;
        if let Some(d) = &self.abstract_device {
            write!(f, ", {}", d.fields())?;
        }
        f.write_str(")")
    }
}

/// What an abstract mesh knows of its devices (JAX's `jax.sharding.AbstractDevice`): their
/// kind, their core count where the platform has one (JAX reads a device's `num_cores`, which
/// only TPUs have), and their platform.
///
/// ```
/// let d = jaxrs::AbstractDevice::new("cpu", None, "cpu");
/// assert_eq!(d.to_string(), "AbstractDevice(device_kind=cpu, num_cores=None, platform=cpu)");
/// assert_eq!(jaxrs::AbstractDevice::of(&jaxrs::devices()[0]), d);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AbstractDevice {
    pub device_kind: String,
    pub num_cores: Option<usize>,
    pub platform: String,
}

impl AbstractDevice {
    /// `AbstractDevice(device_kind, num_cores, platform)`.
    pub fn new(device_kind: &str, num_cores: Option<usize>, platform: &str) -> Self {
        AbstractDevice {
            device_kind: device_kind.to_string(),
            num_cores,
            platform: platform.to_string(),
        }
    }

    /// The description of `device` (no PJRT plugin jaxrs loads reports a core count).
    pub fn of(device: &Device) -> Self {
        AbstractDevice::new(&device.kind(), None, device.platform())
    }

    fn fields(&self) -> String {
        let cores = self
            .num_cores
            .map_or_else(|| "None".to_string(), |n| n.to_string());
        format!(
            "device_kind={}, num_cores={cores}, platform={}",
            self.device_kind, self.platform
        )
    }
}

impl fmt::Display for AbstractDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AbstractDevice({})", self.fields())
    }
}

/// The sharding that puts a whole array on `device` (JAX's
/// `jax.sharding.make_single_device_sharding`, a `SingleDeviceSharding`).
pub fn make_single_device_sharding(device: Device) -> Sharding {
    Sharding::SingleDevice(device)
}

/// The process indices of the run, `0..process_count()` (JAX's `jax.process_indices()`).
pub fn process_indices() -> Vec<usize> {
    (0..crate::core::client::process_count()).collect()
}

/// An array of `shape` laid out as `sharding` says, each device's piece made by
/// `data_callback` from that piece's index ranges (JAX's `jax.make_array_from_callback`):
/// called once per device of the sharding, in its device order, replicas included, as JAX
/// calls it (once in all when every device holds the whole array). The callback returns the piece as an array (made on the host or anywhere else);
/// it is moved to its device.
///
/// Panics, naming the device and the index, when a piece's shape is not the shard's or the
/// pieces' dtypes differ; errors in the sharding (an uneven split) panic as [`device_put`]'s
/// do.
///
/// [`device_put`]: crate::core::sharding::device_put
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{NamedSharding, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["x", "y"])?;
/// let sharding = NamedSharding::new(mesh, P!["x", "y"])?;
/// // Each piece is computed from its index, without the whole array ever existing on the host.
/// let x = jaxrs::make_array_from_callback(&[4, 8], sharding, |index| {
///     let (rows, cols) = (index[0].clone(), index[1].clone());
///     let values: Vec<f32> = rows
///         .flat_map(|r| cols.clone().map(move |c| (r * 8 + c) as f32))
///         .collect();
///     Array::from_vec(values, &[index[0].len(), index[1].len()])
/// });
/// assert_eq!(x.to_vec::<f32>(), (0..32).map(|v| v as f32).collect::<Vec<_>>());
/// assert_eq!(x.addressable_shards()[5].index, vec![2..4, 2..4]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[track_caller]
pub fn make_array_from_callback(
    shape: &[usize],
    sharding: impl Into<Sharding>,
    mut data_callback: impl FnMut(&[Range<usize>]) -> Array,
) -> Array {
    let loc = std::panic::Location::caller();
    let op = "make_array_from_callback";
    let sharding = sharding.into();
    let indices = indices_or_panic(op, &sharding, shape, loc);
    let whole: Vec<Range<usize>> = shape.iter().map(|&n| 0..n).collect();
    let pieces: Vec<Array> = if indices.iter().all(|index| *index == whole) {
        // Fully replicated: one call makes every device's copy, as in JAX.
        vec![data_callback(&whole); indices.len()]
    } else {
        indices.iter().map(|index| data_callback(index)).collect()
    };
    assemble(op, shape, sharding, &indices, pieces, loc)
}

/// An array of `shape` laid out as `sharding` says, made of the given single-device arrays,
/// one per device of the sharding (JAX's `jax.make_array_from_single_device_arrays`): each is
/// taken as the piece of the device it lives on, whatever the order given, and shared, not
/// copied. As in JAX, replicas are not compared: each device keeps the piece it was given.
///
/// Panics, naming what is wrong, when an array is not on one device of the sharding, two are
/// on the same device, a device has none, or a piece's shape or dtype does not fit.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{NamedSharding, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["x", "y"])?;
/// let sharding = NamedSharding::new(mesh.clone(), P!["x"])?;
/// let pieces: Vec<Array> = mesh
///     .devices()
///     .iter()
///     .enumerate()
///     .map(|(i, d)| jaxrs::device_put(&Array::full(&[2, 4], i as f64, DType::F32), *d))
///     .collect();
/// let x = jaxrs::make_array_from_single_device_arrays(&[4, 4], sharding, &pieces);
/// // Rows 0-1 from device 0, rows 2-3 from device 4 (the first device of mesh row 1).
/// assert_eq!(x.to_vec::<f32>()[..4], [0.0; 4]);
/// assert_eq!(x.to_vec::<f32>()[8..12], [4.0; 4]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[track_caller]
pub fn make_array_from_single_device_arrays(
    shape: &[usize],
    sharding: impl Into<Sharding>,
    arrays: &[Array],
) -> Array {
    let loc = std::panic::Location::caller();
    let op = "make_array_from_single_device_arrays";
    let sharding = sharding.into();
    let indices = indices_or_panic(op, &sharding, shape, loc);
    let targets = sharding.devices();
    if arrays.len() != targets.len() {
        panic!(
            "{op}: the sharding has {} devices but {} arrays were given {}",
            targets.len(),
            arrays.len(),
            At::line(loc)
        );
    }
    let mut by_device: Vec<Option<Array>> = vec![None; targets.len()];
    for (i, a) in arrays.iter().enumerate() {
        let held = &a.concrete(op).sharding;
        let Sharding::SingleDevice(device) = held else {
            panic!(
                "{op}: array {i} lies on {} devices ({held}); each must be on one device {}",
                held.devices().len(),
                At::line(loc)
            );
        };
        let Some(slot) = targets.iter().position(|d| d == device) else {
            panic!(
                "{op}: array {i} is on {device}, which the sharding does not use ({sharding}) {}",
                At::line(loc)
            );
        };
        if by_device[slot].is_some() {
            panic!("{op}: two arrays are on {device} {}", At::line(loc));
        }
        by_device[slot] = Some(a.clone());
    }
    let pieces: Vec<Array> = by_device
        .into_iter()
        .map(|a| a.expect("as many arrays as devices, none on the same device"))
        .collect();
    assemble(op, shape, sharding, &indices, pieces, loc)
}

/// An array laid out as `sharding` says from the data this process holds (JAX's
/// `jax.make_array_from_process_local_data`). `global_shape` defaults to the local data's
/// shape. In one process every device is this process's, so the local data is the whole
/// array: a `global_shape` that differs from it is refused, as is a run of several
/// processes (jaxrs runs one program over one process's devices; see the README's "Many
/// hosts").
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{NamedSharding, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["x", "y"])?;
/// let data = Array::arange(0.0, 16.0, 1.0, DType::F32).reshape(&[4, 4]);
/// let x = jaxrs::make_array_from_process_local_data(NamedSharding::new(mesh, P!["x"])?, &data, None);
/// assert_eq!(x.addressable_shards()[4].data.to_vec::<f32>()[..4], [8.0, 9.0, 10.0, 11.0]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[track_caller]
pub fn make_array_from_process_local_data(
    sharding: impl Into<Sharding>,
    local_data: &Array,
    global_shape: Option<&[usize]>,
) -> Array {
    let loc = std::panic::Location::caller();
    let op = "make_array_from_process_local_data";
    let count = crate::core::client::process_count();
    if count > 1 {
        panic!(
            "{op}: this run has {count} processes, and jaxrs does not yet make arrays that span \
             processes (its programs run over one process's devices) {}",
            At::line(loc)
        );
    }
    let local_shape = local_data.shape();
    if let Some(global) = global_shape {
        if global != local_shape {
            panic!(
                "{op}: in one process the local data is the whole array, but its shape \
                 {local_shape:?} is not the global shape {global:?} {}",
                At::line(loc)
            );
        }
    }
    let sharding = sharding.into();
    match crate::core::sharding::try_device_put(local_data, sharding) {
        Ok(a) => a,
        Err(Error::Sharding(m)) => panic!("{op}: {m} {}", At::line(loc)),
        Err(e) => fail(e),
    }
}

/// Each device's index ranges into an array of `shape` laid out as `sharding` says, or a
/// panic at the user's line naming the op and why the sharding does not fit.
fn indices_or_panic(
    op: &str,
    sharding: &Sharding,
    shape: &[usize],
    loc: &'static std::panic::Location<'static>,
) -> Vec<Vec<Range<usize>>> {
    sharding.device_indices(shape).unwrap_or_else(|e| {
        let message = match e {
            Error::Sharding(m) => m,
            other => other.to_string(),
        };
        panic!("{op}: {message} {}", At::line(loc))
    })
}

/// The array whose piece on each device of `sharding` is `pieces[i]` (moved to its device
/// when it is not there), after checking each piece's shape against `indices` and that all
/// share one dtype.
fn assemble(
    op: &str,
    shape: &[usize],
    sharding: Sharding,
    indices: &[Vec<Range<usize>>],
    pieces: Vec<Array>,
    loc: &'static std::panic::Location<'static>,
) -> Array {
    let dtype = match pieces.first() {
        Some(p) => p.dtype(),
        None => panic!("{op}: the sharding has no devices {}", At::line(loc)),
    };
    let mut buffers = Vec::with_capacity(pieces.len());
    for ((piece, index), device) in pieces.iter().zip(indices).zip(sharding.devices()) {
        let want: Vec<usize> = index.iter().map(|r| r.len()).collect();
        if piece.shape() != want.as_slice() {
            panic!(
                "{op}: the piece for {device} (index {index:?}) has shape {:?}, but that \
                 shard of a {shape:?} array is {want:?} {}",
                piece.shape(),
                At::line(loc)
            );
        }
        if piece.dtype() != dtype {
            panic!(
                "{op}: the piece for {device} is {}, the first piece {}; every piece must \
                 have one dtype {}",
                piece.dtype().name(),
                dtype.name(),
                At::line(loc)
            );
        }
        let on_device = piece.on_device(*device);
        let c = on_device.concrete(op);
        buffers.push(c.buffers[0].clone());
    }
    Array::from_shared_shards(buffers, Aval::new(shape.to_vec(), dtype), sharding)
}
