//! The PJRT C API: raw declarations (`sys`) under safe owned handles.
