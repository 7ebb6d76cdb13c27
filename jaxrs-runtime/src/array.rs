//! `Array`: one type for concrete device arrays and traced values.
use crate::{DType, Element};
use std::sync::Arc;

/// An n-dimensional array, concrete (on a device) or traced (inside a transformation).
#[derive(Clone)]
pub struct Array(pub(crate) Arc<()>);

impl Array {
    /// A weakly typed 0-d array (a Rust scalar met in an operation).
    pub fn weak_scalar<T: Element>(_v: T) -> Array {
        todo!()
    }
    /// The value of a concrete array of one element.
    pub fn item<T: Element>(&self) -> T {
        todo!()
    }
    pub fn shape(&self) -> &[usize] {
        todo!()
    }
    pub fn dtype(&self) -> DType {
        todo!()
    }
}
