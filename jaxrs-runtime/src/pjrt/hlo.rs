//! What jaxrs reads from an optimized program (`PJRT_Executable_OptimizedProgram`): the
//! output shardings XLA's SPMD partitioner chose, decoded by hand from the serialized
//! `HloModuleProtoWithConfig`:
//!
//! ```text
//! HloModuleProtoWithConfig  1: hlo_module (HloModuleProto)
//! HloModuleProto           12: spmd_output_sharding (OpSharding)
//! OpSharding                1: type (REPLICATED 0, MAXIMAL 1, TUPLE 2, OTHER 3, MANUAL 4)
//!                           3: tile_assignment_dimensions (repeated int64)
//!                           4: tile_assignment_devices (repeated int64)
//!                           5: tuple_shardings (repeated OpSharding)
//!                           6: replicate_on_last_tile_dim (bool)
//!                           8: last_tile_dims (repeated enum)
//!                           9: iota_reshape_dims (repeated int64)
//!                          10: iota_transpose_perm (repeated int32)
//! ```

/// How one array is split over the partitions of an SPMD program (XLA's `OpSharding`, with
/// the device list expanded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpSharding {
    /// Whole on every partition.
    Replicated,
    /// One sharding per element of a tuple (the outputs of a program with several).
    Tuple(Vec<OpSharding>),
    /// Split into tiles: `dims` tiles per array dimension, then (when longer than the rank)
    /// trailing dimensions of replication; `devices` lists the partition holding each tile,
    /// row-major over `dims`.
    Tiled { dims: Vec<i64>, devices: Vec<i64> },
    /// Anything else (maximal, manual): not read here.
    Other,
}

/// A protobuf field: its number and its value (a varint, or the bytes of a length-delimited
/// field).
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

fn varint(buf: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The fields of one message, in order; `None` if the bytes are not a message.
fn fields(buf: &[u8]) -> Option<Vec<(u32, Field<'_>)>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        let tag = varint(buf, &mut at)?;
        let number = u32::try_from(tag >> 3).ok()?;
        match tag & 7 {
            0 => out.push((number, Field::Varint(varint(buf, &mut at)?))),
            1 => at = at.checked_add(8)?,
            2 => {
                let len = usize::try_from(varint(buf, &mut at)?).ok()?;
                let end = at.checked_add(len)?;
                out.push((number, Field::Bytes(buf.get(at..end)?)));
                at = end;
            }
            5 => at = at.checked_add(4)?,
            _ => return None,
        }
    }
    (at == buf.len()).then_some(out)
}

/// A repeated integer field's values: packed (one length-delimited run) or not.
fn push_ints(field: &Field<'_>, out: &mut Vec<i64>) -> Option<()> {
    match field {
        Field::Varint(v) => out.push(*v as i64),
        Field::Bytes(b) => {
            let mut at = 0;
            while at < b.len() {
                out.push(varint(b, &mut at)? as i64);
            }
        }
    }
    Some(())
}

fn op_sharding(buf: &[u8]) -> Option<OpSharding> {
    let mut kind = 0u64;
    let (mut dims, mut devices, mut reshape, mut perm) = (vec![], vec![], vec![], vec![]);
    let mut tuple = Vec::new();
    for (number, f) in fields(buf)? {
        match (number, &f) {
            (1, Field::Varint(v)) => kind = *v,
            (3, _) => push_ints(&f, &mut dims)?,
            (4, _) => push_ints(&f, &mut devices)?,
            (5, Field::Bytes(b)) => tuple.push(op_sharding(b)?),
            (9, _) => push_ints(&f, &mut reshape)?,
            (10, _) => push_ints(&f, &mut perm)?,
            _ => {}
        }
    }
    Some(match kind {
        0 => OpSharding::Replicated,
        2 => OpSharding::Tuple(tuple),
        3 => {
            if devices.is_empty() {
                devices = iota_devices(&reshape, &perm)?;
            }
            let count: i64 = dims.iter().product();
            if count != devices.len() as i64 {
                return None;
            }
            OpSharding::Tiled { dims, devices }
        }
        _ => OpSharding::Other,
    })
}

/// `arange(prod(reshape)).reshape(reshape).transpose(perm).flatten()`: a tile assignment in
/// XLA's compact iota form.
fn iota_devices(reshape: &[i64], perm: &[i64]) -> Option<Vec<i64>> {
    let n = reshape.len();
    if perm.len() != n {
        return None;
    }
    let shape: Vec<usize> = reshape
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<_>>()?;
    let perm: Vec<usize> = perm
        .iter()
        .map(|&p| usize::try_from(p).ok())
        .collect::<Option<_>>()?;
    let mut strides = vec![1usize; n];
    for i in (0..n.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    let out_shape: Vec<usize> = perm
        .iter()
        .map(|&p| shape.get(p).copied())
        .collect::<Option<_>>()?;
    let total: usize = shape.iter().product();
    let mut out = Vec::with_capacity(total);
    let mut idx = vec![0usize; n];
    for _ in 0..total {
        let src: usize = idx.iter().zip(&perm).map(|(&i, &p)| i * strides[p]).sum();
        out.push(src as i64);
        for d in (0..n).rev() {
            idx[d] += 1;
            if idx[d] < out_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Some(out)
}

/// The output sharding of an optimized program's bytes (`hlo_with_config` or `hlo` format),
/// if it has one that decodes.
pub fn spmd_output_sharding(format: &str, program: &[u8]) -> Option<OpSharding> {
    let module = module_bytes(format, program)?;
    let sharding = fields(module)?
        .into_iter()
        .find_map(|(n, f)| match (n, f) {
            (12, Field::Bytes(b)) => Some(b),
            _ => None,
        })?;
    op_sharding(sharding)
}

/// One instruction of an optimized program's entry computation: its opcode as XLA spells it
/// (`fusion`, `custom-call`, `parameter`), its name, and for a fusion its kind (`kLoop`,
/// `kOutput`), for a custom call its target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HloInstruction {
    pub name: String,
    pub opcode: String,
    /// The fusion kind of a `fusion`, the target of a `custom-call`; empty otherwise.
    pub detail: String,
}

/// The `HloModuleProto` inside an optimized program's bytes (`hlo_with_config` or `hlo`).
fn module_bytes<'a>(format: &str, program: &'a [u8]) -> Option<&'a [u8]> {
    match format {
        "hlo_with_config" => fields(program)?
            .into_iter()
            .find_map(|(n, f)| match (n, f) {
                (1, Field::Bytes(b)) => Some(b),
                _ => None,
            }),
        "hlo" => Some(program),
        _ => None,
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The instructions of an optimized program's entry computation, in the program's order;
/// `None` if the bytes do not decode. Read from
///
/// ```text
/// HloModuleProto        3: computations (HloComputationProto)   6: entry_computation_id
/// HloComputationProto   2: instructions (HloInstructionProto)   5: id
/// HloInstructionProto   1: name   2: opcode   11: fusion_kind   28: custom_call_target
/// ```
pub fn entry_instructions(format: &str, program: &[u8]) -> Option<Vec<HloInstruction>> {
    let module = fields(module_bytes(format, program)?)?;
    let entry_id = module.iter().find_map(|(n, f)| match (n, f) {
        (6, Field::Varint(v)) => Some(*v),
        _ => None,
    })?;
    let entry = module.iter().find_map(|(n, f)| match (n, f) {
        (3, Field::Bytes(b)) => {
            let c = fields(b)?;
            c.iter()
                .any(|(n, f)| matches!((n, f), (5, Field::Varint(id)) if *id == entry_id))
                .then_some(c)
        }
        _ => None,
    })?;
    entry
        .iter()
        .filter_map(|(n, f)| match (n, f) {
            (2, Field::Bytes(b)) => Some(*b),
            _ => None,
        })
        .map(|b| {
            let mut i = HloInstruction {
                name: String::new(),
                opcode: String::new(),
                detail: String::new(),
            };
            for (n, f) in fields(b)? {
                match (n, f) {
                    (1, Field::Bytes(s)) => i.name = text(s),
                    (2, Field::Bytes(s)) => i.opcode = text(s),
                    (11 | 28, Field::Bytes(s)) => i.detail = text(s),
                    _ => {}
                }
            }
            Some(i)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iota_tile_assignments() {
        assert_eq!(
            iota_devices(&[8], &[0]).unwrap(),
            (0..8).collect::<Vec<_>>()
        );
        // [2, 4] transposed: 0 4 1 5 2 6 3 7.
        assert_eq!(
            iota_devices(&[2, 4], &[1, 0]).unwrap(),
            vec![0, 4, 1, 5, 2, 6, 3, 7]
        );
    }

    #[test]
    fn decodes_a_tiled_sharding() {
        // type OTHER, dims [2, 4] packed, iota reshape [8], perm [0].
        let bytes = [
            0x08, 0x03, 0x1a, 0x02, 0x02, 0x04, 0x4a, 0x01, 0x08, 0x52, 0x01, 0x00,
        ];
        assert_eq!(
            op_sharding(&bytes).unwrap(),
            OpSharding::Tiled {
                dims: vec![2, 4],
                devices: (0..8).collect()
            }
        );
    }
}
