//! The vocabulary of shardings, below every layer that uses it: a [`Mesh`] of devices with
//! named axes of JAX's [`AxisType`]s, a [`PartitionSpec`] of [`PartitionDim`]s, and their
//! pair, a [`NamedSharding`]. What lays arrays out by them (`Sharding`, `device_put`, the mesh
//! in scope) is `core::sharding`'s; an abstract value's type sharding (`aval`) is one of these.

use crate::error::{Error, Result};
use crate::pjrt::Device;
use std::fmt;

pub(crate) fn sharding_error(message: impl Into<String>) -> Error {
    Error::Sharding(message.into())
}

/// A grid of devices with named axes, like `jax.sharding.Mesh`: a `[2, 4]` mesh with axes
/// `["dp", "mp"]` has 2 rows of 4 devices; a [`PartitionSpec`] names its axes to split array
/// dimensions over them.
///
/// ```
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
/// assert_eq!(mesh.size(), 8);
/// assert_eq!(mesh.axis_size("mp"), Some(4));
/// assert_eq!(mesh.to_string(), "Mesh('dp': 2, 'mp': 4, axis_types=(Auto, Auto))");
///
/// // Errors name what does not fit.
/// let err = jaxrs::Mesh::new(&jaxrs::devices()[..6], &[2, 4], &["dp", "mp"]).unwrap_err();
/// assert_eq!(err.to_string(), "Mesh::new: a [2, 4] mesh needs 8 devices, 6 were given");
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Mesh {
    pub(crate) devices: Vec<Device>,
    pub(crate) shape: Vec<usize>,
    pub(crate) axis_names: Vec<String>,
    pub(crate) axis_types: Vec<AxisType>,
}

/// How a mesh axis shards values inside a traced function (JAX's `jax.sharding.AxisType`).
///
/// - `Auto`: XLA's partitioner decides how each intermediate value lies over the axis, from
///   the shardings of the arguments, the results and the sharding constraints.
/// - `Explicit`: the sharding over the axis is part of every value's type while tracing
///   (`f32[8@dp,4]`, read with [`typeof_`](crate::typeof_) or `x.aval()`), each operation's
///   result sharding follows from its operands' by the operation's sharding rule, and an
///   operation whose result sharding would be ambiguous stops with a message asking for
///   [`reshard`](crate::reshard) (JAX's "sharding in types").
/// - `Manual`: the axis is handled by hand, as inside [`shard_map`](crate::shard_map);
///   outside one it behaves as `Auto`.
///
/// jaxrs meshes are `Auto` unless made otherwise ([`Mesh::with_axis_types`]), where JAX
/// 0.10's `make_mesh` makes `Explicit` axes by default: see [`make_mesh`](crate::make_mesh).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AxisType {
    Auto,
    Explicit,
    Manual,
}

impl Mesh {
    /// A mesh of `shape` holding `devices` in row-major order, its axes named `axis_names`.
    ///
    /// Errors ([`Error::Sharding`]) when the names and the shape differ in length, a name is
    /// empty or repeated, an axis has size 0, the device count is not the product of the
    /// shape, or a device is listed twice.
    pub fn new(devices: &[Device], shape: &[usize], axis_names: &[&str]) -> Result<Mesh> {
        if axis_names.len() != shape.len() {
            return Err(sharding_error(format!(
                "Mesh::new: the shape {shape:?} has {} axes but {} axis names were given \
                 ({axis_names:?})",
                shape.len(),
                axis_names.len()
            )));
        }
        for (i, name) in axis_names.iter().enumerate() {
            if name.is_empty() {
                return Err(sharding_error(format!(
                    "Mesh::new: axis {i} has an empty name ({axis_names:?})"
                )));
            }
            if axis_names[..i].contains(name) {
                return Err(sharding_error(format!(
                    "Mesh::new: the axis name {name:?} appears twice in {axis_names:?}"
                )));
            }
        }
        if let Some(i) = shape.iter().position(|&n| n == 0) {
            return Err(sharding_error(format!(
                "Mesh::new: axis {:?} has size 0 (shape {shape:?})",
                axis_names[i]
            )));
        }
        let size: usize = shape.iter().product();
        if devices.len() != size {
            return Err(sharding_error(format!(
                "Mesh::new: a {shape:?} mesh needs {size} devices, {} were given",
                devices.len()
            )));
        }
        for (i, d) in devices.iter().enumerate() {
            if devices[..i].contains(d) {
                return Err(sharding_error(format!(
                    "Mesh::new: {d} appears twice in the device list"
                )));
            }
        }
        Ok(Mesh {
            devices: devices.to_vec(),
            shape: shape.to_vec(),
            axis_names: axis_names.iter().map(|s| s.to_string()).collect(),
            axis_types: vec![AxisType::Auto; shape.len()],
        })
    }

    /// The same mesh with its axes of these types (JAX's `make_mesh(..., axis_types=...)` and
    /// `Mesh(..., axis_types=...)`); one type per axis, else an [`Error::Sharding`].
    ///
    /// ```
    /// use jaxrs::AxisType::{Auto, Explicit};
    ///
    /// jaxrs::set_cpu_device_count(8)?;
    /// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?.with_axis_types(&[Explicit, Auto])?;
    /// assert_eq!(mesh.axis_types(), &[Explicit, Auto]);
    /// assert_eq!(mesh.to_string(), "Mesh('dp': 2, 'mp': 4, axis_types=(Explicit, Auto))");
    /// # Ok::<(), jaxrs::Error>(())
    /// ```
    pub fn with_axis_types(&self, axis_types: &[AxisType]) -> Result<Mesh> {
        if axis_types.len() != self.shape.len() {
            return Err(sharding_error(format!(
                "Mesh::with_axis_types: the mesh has {} axes ({:?}) but {} axis types were \
                 given ({axis_types:?})",
                self.shape.len(),
                self.axis_names,
                axis_types.len()
            )));
        }
        Ok(Mesh {
            axis_types: axis_types.to_vec(),
            ..self.clone()
        })
    }

    /// The type of each axis.
    pub fn axis_types(&self) -> &[AxisType] {
        &self.axis_types
    }

    /// Is the axis called `name` an [`AxisType::Explicit`] one?
    pub fn is_explicit_axis(&self, name: &str) -> bool {
        self.axis_index(name)
            .is_some_and(|i| self.axis_types[i] == AxisType::Explicit)
    }

    /// The same devices in the same grid with the same axis names, whatever the axes' types:
    /// one program's mesh, as JAX's `auto_axes` and `explicit_axes` switch the types inside
    /// a function of it.
    pub fn same_grid(&self, other: &Mesh) -> bool {
        self.devices == other.devices
            && self.shape == other.shape
            && self.axis_names == other.axis_names
    }

    /// Does any axis have the type [`AxisType::Explicit`]?
    pub fn has_explicit_axes(&self) -> bool {
        self.axis_types.contains(&AxisType::Explicit)
    }

    /// The devices, in row-major order over the mesh's axes.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The size of each axis.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The axes' names.
    pub fn axis_names(&self) -> &[String] {
        &self.axis_names
    }

    /// The number of devices.
    pub fn size(&self) -> usize {
        self.devices.len()
    }

    /// The size of the axis called `name`, if the mesh has one.
    pub fn axis_size(&self, name: &str) -> Option<usize> {
        self.axis_index(name).map(|i| self.shape[i])
    }

    pub(crate) fn axis_index(&self, name: &str) -> Option<usize> {
        self.axis_names.iter().position(|n| n == name)
    }

    /// The position of the `flat`-th device along each axis.
    pub(crate) fn coords(&self, mut flat: usize) -> Vec<usize> {
        let mut coords = vec![0; self.shape.len()];
        for (c, &n) in coords.iter_mut().zip(&self.shape).rev() {
            *c = flat % n;
            flat /= n;
        }
        coords
    }

    pub(crate) fn axes_str(&self, names: &[String]) -> String {
        let parts: Vec<String> = names
            .iter()
            .map(|n| format!("{n:?}={}", self.axis_size(n).unwrap_or(0)))
            .collect();
        parts.join(", ")
    }
}

impl fmt::Display for Mesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_mesh(f, "Mesh", &self.axis_names, &self.shape, &self.axis_types)?;
        f.write_str(")")
    }
}

/// `{kind}('dp': 2, 'mp': 4, axis_types=(Auto, Auto)`, as JAX prints a mesh, without the
/// closing parenthesis (an abstract mesh adds its device after the types).
pub(crate) fn write_mesh(
    f: &mut fmt::Formatter<'_>,
    kind: &str,
    names: &[String],
    sizes: &[usize],
    types: &[AxisType],
) -> fmt::Result {
    write!(f, "{kind}(")?;
    for (i, (name, n)) in names.iter().zip(sizes).enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "'{name}': {n}")?;
    }
    // JAX 0.10.2 prints the types whatever they are, as a Python tuple.
    let types: Vec<String> = types.iter().map(|t| format!("{t:?}")).collect();
    let trailing = if types.len() == 1 { "," } else { "" };
    write!(f, ", axis_types=({}{trailing})", types.join(", "))
}

impl fmt::Debug for Mesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self} over {:?}", self.devices)
    }
}

/// How one array dimension is laid out over a mesh: whole on every device, or split over one
/// or more mesh axes (the first listed is the major one, as in JAX's `P(("dp", "mp"))`).
///
/// Built by [`P!`](crate::P) from `None`, a name, or a tuple of names.
///
/// ```
/// use jaxrs::PartitionDim;
///
/// assert_eq!(PartitionDim::from(None), PartitionDim::Replicated);
/// assert_eq!(PartitionDim::from("dp"), PartitionDim::Axes(vec!["dp".into()]));
/// assert_eq!(
///     PartitionDim::from(("dp", "mp")),
///     PartitionDim::Axes(vec!["dp".into(), "mp".into()])
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PartitionDim {
    /// Not split: every device holds the whole dimension (JAX's `None`).
    Replicated,
    /// Split evenly over these mesh axes, major first.
    Axes(Vec<String>),
}

impl From<Option<&str>> for PartitionDim {
    fn from(axis: Option<&str>) -> PartitionDim {
        match axis {
            None => PartitionDim::Replicated,
            Some(a) => PartitionDim::Axes(vec![a.to_string()]),
        }
    }
}

impl From<&str> for PartitionDim {
    fn from(axis: &str) -> PartitionDim {
        PartitionDim::Axes(vec![axis.to_string()])
    }
}

impl From<String> for PartitionDim {
    fn from(axis: String) -> PartitionDim {
        PartitionDim::Axes(vec![axis])
    }
}

impl From<(&str, &str)> for PartitionDim {
    fn from((a, b): (&str, &str)) -> PartitionDim {
        PartitionDim::Axes(vec![a.to_string(), b.to_string()])
    }
}

impl From<(&str, &str, &str)> for PartitionDim {
    fn from((a, b, c): (&str, &str, &str)) -> PartitionDim {
        PartitionDim::Axes(vec![a.to_string(), b.to_string(), c.to_string()])
    }
}

impl From<(&str, &str, &str, &str)> for PartitionDim {
    fn from((a, b, c, d): (&str, &str, &str, &str)) -> PartitionDim {
        PartitionDim::Axes([a, b, c, d].iter().map(|s| s.to_string()).collect())
    }
}

impl From<Vec<&str>> for PartitionDim {
    fn from(axes: Vec<&str>) -> PartitionDim {
        if axes.is_empty() {
            PartitionDim::Replicated
        } else {
            PartitionDim::Axes(axes.iter().map(|s| s.to_string()).collect())
        }
    }
}

/// Which mesh axes split each array dimension, like `jax.sharding.PartitionSpec`. Dimensions
/// past the spec's length are not split (replicated), as in JAX.
///
/// Write it with [`P!`](crate::P): `P![None, "mp"]`, `P!["dp"]`, `P![("dp", "mp"), None]`
/// (several mesh axes on one dimension), `P![]` (fully replicated). The function form is
/// [`PartitionSpec::new`] over [`PartitionDim`]s.
///
/// ```
/// use jaxrs::{PartitionDim, PartitionSpec, P};
///
/// let spec = P![("dp", "mp"), None];
/// assert_eq!(spec.to_string(), "PartitionSpec(('dp', 'mp'), None)");
/// assert_eq!(spec, PartitionSpec::new(vec![("dp", "mp").into(), PartitionDim::Replicated]));
/// assert_eq!(P!["dp"].to_string(), "PartitionSpec('dp',)");
/// assert_eq!(P![].len(), 0);
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct PartitionSpec(Vec<PartitionDim>);

impl PartitionSpec {
    /// A spec from one entry per leading array dimension.
    pub fn new(dims: Vec<PartitionDim>) -> PartitionSpec {
        PartitionSpec(dims)
    }

    /// The entries, one per leading dimension.
    pub fn dims(&self) -> &[PartitionDim] {
        &self.0
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Has the spec no entries (every dimension replicated)?
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The mesh axes it splits some dimension over, in the order written.
    pub fn axis_names(&self) -> impl Iterator<Item = &String> {
        self.0.iter().flat_map(|d| match d {
            PartitionDim::Axes(axes) => axes.as_slice(),
            PartitionDim::Replicated => &[],
        })
    }
}

impl fmt::Display for PartitionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PartitionSpec(")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match d {
                PartitionDim::Replicated => f.write_str("None")?,
                PartitionDim::Axes(axes) if axes.len() == 1 => write!(f, "'{}'", axes[0])?,
                PartitionDim::Axes(axes) => {
                    let quoted: Vec<String> = axes.iter().map(|a| format!("'{a}'")).collect();
                    write!(f, "({})", quoted.join(", "))?
                }
            }
        }
        // A one-element Python tuple, as JAX prints it.
        if self.0.len() == 1 {
            f.write_str(",")?;
        }
        f.write_str(")")
    }
}

impl fmt::Debug for PartitionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A [`PartitionSpec`] from its entries: `None` (replicated), a mesh axis name, or a tuple of
/// names (the dimension split over all of them, the first major). Like JAX's `P(...)`.
///
/// ```
/// use jaxrs::P;
///
/// let w_spec = P![None, "mp"]; // columns split over "mp", rows whole
/// let x_spec = P!["dp"]; // rows split over "dp"; the unmentioned dimension is whole
/// let both = P![("dp", "mp"), None]; // rows split over all 8 devices of a 2 x 4 mesh
/// assert_eq!(w_spec.len(), 2);
/// assert_eq!(x_spec.len(), 1);
/// assert_eq!(both.to_string(), "PartitionSpec(('dp', 'mp'), None)");
/// ```
#[macro_export]
macro_rules! P {
    ($($dim:expr),* $(,)?) => {
        $crate::PartitionSpec::new(::std::vec![$($crate::PartitionDim::from($dim)),*])
    };
}

/// A [`Mesh`] and a [`PartitionSpec`] over its axes, like `jax.sharding.NamedSharding`.
///
/// ```
/// use jaxrs::{Mesh, NamedSharding, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
/// let s = NamedSharding::new(mesh.clone(), P![None, "mp"])?;
/// assert_eq!(s.shard_shape(&[6, 8])?, vec![6, 2]);
///
/// let err = NamedSharding::new(mesh.clone(), P!["x"]).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "NamedSharding: PartitionSpec('x',) names the axis \"x\", which the mesh does not have \
///      (its axes: [\"dp\", \"mp\"])"
/// );
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct NamedSharding {
    pub(crate) mesh: Mesh,
    pub(crate) spec: PartitionSpec,
}

impl NamedSharding {
    /// Pairs `mesh` and `spec`. Errors ([`Error::Sharding`]) when the spec names an axis the
    /// mesh does not have (listing the mesh's axes) or uses an axis twice.
    pub fn new(mesh: Mesh, spec: PartitionSpec) -> Result<NamedSharding> {
        let mut used: Vec<&str> = Vec::new();
        for dim in spec.dims() {
            let PartitionDim::Axes(axes) = dim else {
                continue;
            };
            if axes.is_empty() {
                return Err(sharding_error(format!(
                    "NamedSharding: {spec} has an entry with no axes (write None for a \
                     dimension that is not split)"
                )));
            }
            for a in axes {
                if mesh.axis_index(a).is_none() {
                    return Err(sharding_error(format!(
                        "NamedSharding: {spec} names the axis {a:?}, which the mesh does not \
                         have (its axes: {:?})",
                        mesh.axis_names()
                    )));
                }
                if used.contains(&a.as_str()) {
                    return Err(sharding_error(format!(
                        "NamedSharding: {spec} uses the mesh axis {a:?} twice; an axis can split \
                         one dimension only"
                    )));
                }
                used.push(a);
            }
        }
        Ok(NamedSharding { mesh, spec })
    }

    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    pub fn spec(&self) -> &PartitionSpec {
        &self.spec
    }

    /// The number of pieces each spec entry splits its dimension into.
    pub(crate) fn pieces(&self, dim: &PartitionDim) -> usize {
        match dim {
            PartitionDim::Replicated => 1,
            PartitionDim::Axes(axes) => axes
                .iter()
                .map(|a| {
                    self.mesh
                        .axis_size(a)
                        .expect("validated by NamedSharding::new")
                })
                .product(),
        }
    }
}

impl fmt::Display for NamedSharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NamedSharding(mesh={}, spec={})", self.mesh, self.spec)
    }
}

impl fmt::Debug for NamedSharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
