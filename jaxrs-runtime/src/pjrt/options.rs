//! Compile options, encoded by hand as XLA's `CompileOptionsProto`.
//!
//! Only the fields jaxrs sets are written:
//!
//! ```text
//! CompileOptionsProto          3: executable_build_options (message)
//!                              7: map<string, OptionOverrideProto> env_option_overrides
//!                                 (entries: 1: key, 2: value; OptionOverrideProto 2: bool_field,
//!                                 3: int_field)
//! ExecutableBuildOptionsProto  4: num_replicas (int64)   5: num_partitions (int64)
//!                              6: use_spmd_partitioning (bool)
//!                              9: device_assignment (message)
//!                             19: use_shardy_partitioner (bool)
//! DeviceAssignmentProto        1: replica_count (int32)  2: computation_count (int32)
//!                              3: repeated computation_devices {
//!                                     1: repeated int64 replica_device_ids (packed) }
//! ```
//!
//! An empty options blob aborts the CPU plugin (`replica_count > 0`), so the replica and
//! partition counts are always written, at least 1.

/// How to compile a program: replicas (pmap), partitions (SPMD, pjit) and device placement.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Number of replicas; 0 means 1.
    pub num_replicas: i64,
    /// Number of partitions; 0 means 1.
    pub num_partitions: i64,
    pub use_spmd_partitioning: bool,
    /// Needed for programs with `sdy.*` shardings.
    pub use_shardy_partitioner: bool,
    /// Device ids, `[replica][computation]` (a computation is a partition).
    pub device_assignment: Option<Vec<Vec<i64>>>,
    /// XLA debug options set for this compilation only (`xla_cpu_enable_fast_min_max`, ...),
    /// as JAX sets them through the same field.
    pub xla_bool_options: Vec<(String, bool)>,
    /// Integer XLA debug options for this compilation only (`xla_cpu_prefer_vector_width`).
    pub xla_int_options: Vec<(String, i64)>,
}

const VARINT: u8 = 0;
const LEN: u8 = 2;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    put_varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn put_int(out: &mut Vec<u8>, field: u32, v: i64) {
    put_tag(out, field, VARINT);
    // Negative int32/int64 values are ten-byte two's complement varints.
    put_varint(out, v as u64);
}

fn put_message(out: &mut Vec<u8>, field: u32, body: &[u8]) {
    put_tag(out, field, LEN);
    put_varint(out, body.len() as u64);
    out.extend_from_slice(body);
}

impl CompileOptions {
    /// One replica, one partition: a program for a single device.
    pub fn single_device() -> Self {
        CompileOptions {
            num_replicas: 1,
            num_partitions: 1,
            ..Default::default()
        }
    }

    /// The serialized `CompileOptionsProto`.
    ///
    /// # Panics
    /// If `device_assignment` is not rectangular (every replica must list the same number of
    /// computations).
    pub fn encode(&self) -> Vec<u8> {
        let mut build = Vec::with_capacity(32);
        put_int(&mut build, 4, self.num_replicas.max(1));
        put_int(&mut build, 5, self.num_partitions.max(1));
        if self.use_spmd_partitioning {
            put_int(&mut build, 6, 1);
        }
        if let Some(da) = &self.device_assignment {
            put_message(&mut build, 9, &encode_device_assignment(da));
        }
        if self.use_shardy_partitioner {
            put_int(&mut build, 19, 1);
        }
        let mut out = Vec::with_capacity(build.len() + 4);
        put_message(&mut out, 3, &build);
        let overrides = self
            .xla_bool_options
            .iter()
            .map(|(name, value)| (name, 2, i64::from(*value)));
        let ints = self
            .xla_int_options
            .iter()
            .map(|(name, value)| (name, 3, *value));
        for (name, field, value) in overrides.chain(ints) {
            let mut over = Vec::new();
            put_int(&mut over, field, value);
            let mut entry = Vec::new();
            put_message(&mut entry, 1, name.as_bytes());
            put_message(&mut entry, 2, &over);
            put_message(&mut out, 7, &entry);
        }
        out
    }
}

fn encode_device_assignment(da: &[Vec<i64>]) -> Vec<u8> {
    let replicas = da.len();
    let computations = da.first().map_or(0, Vec::len);
    assert!(
        da.iter().all(|r| r.len() == computations),
        "device_assignment must be rectangular ([replica][computation]), got {da:?}"
    );
    let mut out = Vec::new();
    put_int(&mut out, 1, replicas as i64);
    put_int(&mut out, 2, computations as i64);
    for c in 0..computations {
        let mut ids = Vec::new();
        for row in da {
            put_varint(&mut ids, row[c] as u64);
        }
        let mut comp = Vec::new();
        put_message(&mut comp, 1, &ids);
        put_message(&mut out, 3, &comp);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        let mut v = Vec::new();
        put_varint(&mut v, 300);
        assert_eq!(v, [0xac, 0x02]);
        let mut v = Vec::new();
        put_int(&mut v, 1, -1);
        assert_eq!(v.len(), 11);
    }

    #[test]
    fn device_assignment_layout() {
        // 2 replicas x 1 computation: devices 0 and 1.
        let o = CompileOptions {
            num_replicas: 2,
            device_assignment: Some(vec![vec![0], vec![1]]),
            ..CompileOptions::single_device()
        };
        let da = [0x08, 0x02, 0x10, 0x01, 0x1a, 0x04, 0x0a, 0x02, 0x00, 0x01];
        let mut want = vec![
            0x1a,
            4 + 2 + da.len() as u8,
            0x20,
            0x02,
            0x28,
            0x01,
            0x4a,
            da.len() as u8,
        ];
        want.extend_from_slice(&da);
        assert_eq!(o.encode(), want);
    }

    #[test]
    fn bool_override_is_encoded_as_jaxlib_encodes_it() {
        // The tail jaxlib 0.10.2's CompileOptions.SerializeAsString() writes for
        // env_option_overrides = [("xla_cpu_enable_fast_min_max", False)].
        let o = CompileOptions {
            xla_bool_options: vec![("xla_cpu_enable_fast_min_max".into(), false)],
            ..CompileOptions::single_device()
        };
        let mut want = vec![0x3a, 0x21, 0x0a, 0x1b];
        want.extend_from_slice(b"xla_cpu_enable_fast_min_max");
        want.extend_from_slice(&[0x12, 0x02, 0x10, 0x00]);
        assert!(o.encode().ends_with(&want), "{:02x?}", o.encode());
    }

    #[test]
    fn int_overrides_are_int_fields() {
        let o = CompileOptions {
            xla_int_options: vec![("xla_cpu_prefer_vector_width".into(), 128)],
            ..CompileOptions::single_device()
        };
        // Entry (field 7): key (1) "xla_cpu_prefer_vector_width", value (2) an
        // OptionOverrideProto whose int_field (3) is 128 (varint 0x80 0x01).
        let mut want = vec![0x3a, 0x22, 0x0a, 0x1b];
        want.extend_from_slice(b"xla_cpu_prefer_vector_width");
        want.extend_from_slice(&[0x12, 0x03, 0x18, 0x80, 0x01]);
        assert!(o.encode().ends_with(&want), "{:02x?}", o.encode());
    }
}
