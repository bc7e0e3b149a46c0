use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub path: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub removed: bool,
}

// A call into C reaches files, the network or processes where no scan can
// follow: the `extern` block and the `unsafe` call each need an allowance.

/// Remove a file through the C library.
#[skill()]
pub async fn remove(input: In) -> Out {
    unsafe extern "C" {
        fn unlink(path: *const std::ffi::c_char) -> i32;
    }
    let path = std::ffi::CString::new(input.path).unwrap_or_default();
    let removed = unsafe { unlink(path.as_ptr()) } == 0;
    Out { removed }
}

unsafe extern "C" {
    fn system(command: *const std::ffi::c_char) -> i32;
}

/// Run a command through the C library, declared outside the body.
#[skill()]
pub async fn run(input: In) -> Out {
    let command = std::ffi::CString::new(input.path).unwrap_or_default();
    Out { removed: unsafe { system(command.as_ptr()) } == 0 }
}

/// Allowed, with its reason.
#[skill(ambient(unsafe_code = "reads the clock through the C library; no file, network or process"))]
pub async fn clock(input: In) -> Out {
    unsafe extern "C" {
        fn time(t: *mut i64) -> i64;
    }
    let _ = input;
    Out { removed: unsafe { time(std::ptr::null_mut()) } > 0 }
}

fn main() {}
