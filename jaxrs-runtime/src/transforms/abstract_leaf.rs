//! The leaves abstract evaluation takes: arrays, their abstract values, and abstract values
//! laid out over a mesh (JAX's `ShapeDtypeStruct` with a sharding).

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::sharding::{NamedSharding, Sharding};

/// A leaf [`eval_shape`](crate::eval_shape) and [`Jitted::lower`](crate::Jitted::lower) can take: an [`Array`],
/// its abstract value, or an abstract value with a sharding ([`ShardedShapeDtypeStruct`]).
pub trait AbstractLeaf: Clone {
    /// The shape, dtype and weak type.
    fn abstract_value(&self) -> Aval;

    /// How the value lies over a mesh, when it does.
    fn named_sharding(&self) -> Option<NamedSharding> {
        None
    }

    /// Whether [`AbstractLeaf::named_sharding`] is `Some` (asked on every jitted call, so an
    /// implementation answers without building the sharding).
    fn is_sharded(&self) -> bool {
        self.named_sharding().is_some()
    }
}

impl AbstractLeaf for Array {
    fn abstract_value(&self) -> Aval {
        self.aval().clone()
    }

    fn named_sharding(&self) -> Option<NamedSharding> {
        match self.sharding()? {
            Sharding::Named(n) => Some(n.clone()),
            _ => None,
        }
    }

    fn is_sharded(&self) -> bool {
        matches!(self.sharding(), Some(Sharding::Named(_)))
    }
}

impl AbstractLeaf for Aval {
    fn abstract_value(&self) -> Aval {
        self.clone()
    }
}

/// An abstract array laid out over a mesh: JAX's `ShapeDtypeStruct(shape, dtype,
/// sharding=...)`, made by [`Aval::with_sharding`] (jaxrs's [`ShapeDtypeStruct`](crate::ShapeDtypeStruct) is the
/// sharding-free [`Aval`]). [`Jitted::lower`](crate::Jitted::lower) compiles for the layout it
/// names, as for an array laid out so.
///
/// ```
/// use jaxrs::{DType, Mesh, NamedSharding, ShapeDtypeStruct, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
/// let x = ShapeDtypeStruct::new([8, 4], DType::F32)
///     .with_sharding(NamedSharding::new(mesh, P!["dp", None])?);
/// assert_eq!(x.aval.to_string(), "f32[8,4]");
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ShardedShapeDtypeStruct {
    /// The shape and dtype.
    pub aval: Aval,
    /// How it lies (`None`: as the function's `in_shardings` say, else on one device).
    pub sharding: Option<NamedSharding>,
}

impl Aval {
    /// This abstract value laid out as `sharding` (JAX's `ShapeDtypeStruct(..., sharding=s)`).
    pub fn with_sharding(self, sharding: NamedSharding) -> ShardedShapeDtypeStruct {
        ShardedShapeDtypeStruct {
            aval: self,
            sharding: Some(sharding),
        }
    }
}

impl From<Aval> for ShardedShapeDtypeStruct {
    fn from(aval: Aval) -> Self {
        ShardedShapeDtypeStruct {
            aval,
            sharding: None,
        }
    }
}

impl AbstractLeaf for ShardedShapeDtypeStruct {
    fn abstract_value(&self) -> Aval {
        self.aval.clone()
    }

    fn named_sharding(&self) -> Option<NamedSharding> {
        self.sharding.clone()
    }
}
