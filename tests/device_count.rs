//! `set_cpu_device_count` against `JAXRS_CPU_DEVICES`, in a process of its own (the count is
//! fixed once per process, so this file holds one test).

#[test]
fn the_call_wins_over_the_variable_and_is_fixed_once_the_client_exists() {
    // Before any client exists; the test harness runs nothing else in this process.
    std::env::set_var("JAXRS_CPU_DEVICES", "3");
    let zero = jaxrs::set_cpu_device_count(0).unwrap_err();
    assert!(
        zero.to_string()
            .contains("the CPU device count must be at least 1"),
        "{zero}"
    );
    jaxrs::set_cpu_device_count(5).unwrap();
    // Changing one's mind before the first use is allowed.
    jaxrs::set_cpu_device_count(2).unwrap();
    assert_eq!(jaxrs::local_device_count(), 2);
    assert_eq!(jaxrs::devices().len(), 2);
    jaxrs::set_cpu_device_count(2).unwrap();
    match jaxrs::set_cpu_device_count(3) {
        Err(jaxrs::Error::DeviceCountFixed {
            requested: 3,
            existing: 2,
        }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(
        jaxrs::set_cpu_device_count(8).unwrap_err().to_string(),
        "cannot switch to 8 CPU devices: the PJRT client already exists with 2; call \
         jaxrs::set_cpu_device_count before the first array operation (or set \
         JAXRS_CPU_DEVICES)"
    );
}
