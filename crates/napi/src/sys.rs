//! Every `unsafe` block of the binding, and nothing else.
//!
//! The crate is under the workspace lints (`unsafe_code = "deny"`); this module alone is allowed
//! unsafe code, because four things cannot be done without it: raw N-API calls (the result
//! writer builds JavaScript values straight from serde, which napi's safe types would slow by
//! a C string and a name lookup per property), napi's conversion traits (whose methods are
//! `unsafe fn`), two calls into mimalloc's C API, and the run-time lookup of a Node-API call
//! newer than the oldest Node supported. Each block says what makes it sound.
//!
//! The N-API wrappers are methods of [`RawEnv`], which can only be made from a live [`Env`] and
//! carries its lifetime: a wrapper is never called with another environment or after the
//! callback ended. The handles (`napi_value`) they take are ones these wrappers returned in the
//! same environment during the same callback; the crate's one user of them, `js_value`, never
//! keeps one beyond the writer that made it (a writer lives inside one callback).

#![allow(unsafe_code)]

use crate::job::{Signal, Written};
use napi::bindgen_prelude::{AbortSignal, FromNapiValue, Object, ToNapiValue};
use napi::sys::{self, napi_env, napi_status, napi_value};
use napi::{Env, JsValue, Unknown};
use serde::Serialize;
use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

type Result<T> = napi::Result<T>;

/// The environment of the callback being served, for raw N-API calls.
#[derive(Clone, Copy)]
pub(crate) struct RawEnv<'e> {
    env: napi_env,
    _env: PhantomData<&'e Env>,
}

/// The value an N-API call writes to its out-parameter, or the call's error.
fn create(call: impl FnOnce(*mut napi_value) -> napi_status) -> Result<napi_value> {
    let mut out = ptr::null_mut();
    check(call(&mut out))?;
    Ok(out)
}

fn check(status: napi_status) -> Result<()> {
    napi::check_status!(status, "a result could not be converted to JavaScript")
}

// SAFETY (every block below that calls N-API, unless it says more): `self.env` is the live
// environment of the current callback (a `RawEnv` is made from an `&Env` and cannot outlive it);
// every `napi_value` passed was made in that environment during that callback (module comment);
// every pointer passed points to live data of the length given; `out` is a local slot that N-API
// writes once.
impl<'e> RawEnv<'e> {
    pub(crate) fn new(env: &'e Env) -> Self {
        RawEnv {
            env: env.raw(),
            _env: PhantomData,
        }
    }

    /// `value` as napi's `Unknown` of this environment.
    pub(crate) fn unknown(self, value: napi_value) -> Unknown<'e> {
        // SAFETY: see above; `value` is a handle of this environment.
        unsafe { Unknown::from_raw_unchecked(self.env, value) }
    }

    pub(crate) fn string(self, text: &str) -> Result<napi_value> {
        // SAFETY: see above; `text` is `text.len()` bytes of UTF-8, which fits an `isize`.
        create(|out| unsafe {
            sys::napi_create_string_utf8(self.env, text.as_ptr().cast(), text.len() as isize, out)
        })
    }

    /// The UTF-8 of the JavaScript string `value`, cut to `back.len() - 1` bytes, written into
    /// `back` (then NUL-terminated); the count of text bytes written.
    pub(crate) fn read_string(self, value: napi_value, back: &mut [u8]) -> Result<usize> {
        let mut written = 0usize;
        // SAFETY: see above; `back` holds `back.len()` writable bytes and N-API writes at most
        // that many (the text cut to fit, and a terminator), and the count to `written`.
        check(unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                value,
                back.as_mut_ptr().cast(),
                back.len(),
                &mut written,
            )
        })?;
        Ok(written)
    }

    pub(crate) fn double(self, v: f64) -> Result<napi_value> {
        // SAFETY: see above.
        create(|out| unsafe { sys::napi_create_double(self.env, v, out) })
    }

    pub(crate) fn int32(self, v: i32) -> Result<napi_value> {
        // SAFETY: see above.
        create(|out| unsafe { sys::napi_create_int32(self.env, v, out) })
    }

    pub(crate) fn uint32(self, v: u32) -> Result<napi_value> {
        // SAFETY: see above.
        create(|out| unsafe { sys::napi_create_uint32(self.env, v, out) })
    }

    pub(crate) fn boolean(self, v: bool) -> Result<napi_value> {
        // SAFETY: see above.
        create(|out| unsafe { sys::napi_get_boolean(self.env, v, out) })
    }

    pub(crate) fn null(self) -> Result<napi_value> {
        // SAFETY: see above.
        create(|out| unsafe { sys::napi_get_null(self.env, out) })
    }

    pub(crate) fn undefined(self) -> Result<napi_value> {
        // SAFETY: see above.
        create(|out| unsafe { sys::napi_get_undefined(self.env, out) })
    }

    pub(crate) fn object(self) -> Result<napi_value> {
        // SAFETY: see above.
        create(|out| unsafe { sys::napi_create_object(self.env, out) })
    }

    pub(crate) fn array(self, len: usize) -> Result<napi_value> {
        // SAFETY: see above.
        create(|out| unsafe { sys::napi_create_array_with_length(self.env, len, out) })
    }

    /// A string of the Latin-1 characters `bytes` (one byte each): V8 copies them into a
    /// one-byte string without decoding.
    pub(crate) fn latin1(self, bytes: &[u8]) -> Result<napi_value> {
        // SAFETY: see above; `bytes` is `bytes.len()` readable bytes, which fits an `isize`.
        create(|out| unsafe {
            sys::napi_create_string_latin1(
                self.env,
                bytes.as_ptr().cast(),
                bytes.len() as isize,
                out,
            )
        })
    }

    /// A string of the Latin-1 characters `text` that V8 reads in place where Node has
    /// `node_api_create_external_string_latin1` (18.18, 20.4 and later): the string holds a
    /// reference to `text`, released when V8 collects it. Elsewhere a copy ([`RawEnv::latin1`]).
    pub(crate) fn latin1_shared(self, text: &Arc<Vec<u8>>) -> Result<napi_value> {
        let Some(create_external) = external_latin1() else {
            return self.latin1(text);
        };
        let hint = Box::into_raw(Box::new(Arc::clone(text)));
        let mut copied = false;
        // SAFETY: see above; the bytes live in the vector of the `Arc` that `hint` keeps alive
        // (and no one can change while it is shared) until `release_shared` drops it, which
        // N-API calls once: when V8 collects the string, or before returning when it copied them
        // instead. `create_external` has the signature Node declares for that symbol
        // (`external_latin1`).
        let result = create(|out| unsafe {
            create_external(
                self.env,
                text.as_ptr().cast(),
                text.len() as isize,
                Some(release_shared),
                hint.cast(),
                out,
                &mut copied,
            )
        });
        if result.is_err() {
            // Refused before it took the bytes (an argument check): the reference is ours again.
            // SAFETY: `hint` came from `Box::into_raw` above and N-API did not keep it.
            drop(unsafe { Box::from_raw(hint) });
        }
        result
    }

    /// A `Buffer` holding a copy of `bytes`.
    pub(crate) fn buffer(self, bytes: &[u8]) -> Result<napi_value> {
        // SAFETY: see above; N-API copies `bytes.len()` bytes from `bytes` and, with a null
        // `result_data`, hands back no pointer into the new buffer.
        create(|out| unsafe {
            sys::napi_create_buffer_copy(
                self.env,
                bytes.len(),
                bytes.as_ptr().cast(),
                ptr::null_mut(),
                out,
            )
        })
    }

    pub(crate) fn set(self, object: napi_value, key: napi_value, value: napi_value) -> Result<()> {
        // SAFETY: see above.
        check(unsafe { sys::napi_set_property(self.env, object, key, value) })
    }

    pub(crate) fn set_element(
        self,
        array: napi_value,
        index: u32,
        value: napi_value,
    ) -> Result<()> {
        // SAFETY: see above.
        check(unsafe { sys::napi_set_element(self.env, array, index, value) })
    }

    /// `function(...args)` with `this` undefined.
    pub(crate) fn call(self, function: napi_value, args: &[napi_value]) -> Result<napi_value> {
        let this = self.undefined()?;
        // SAFETY: see above; `args` is `args.len()` handles of this environment.
        create(|out| unsafe {
            sys::napi_call_function(self.env, this, function, args.len(), args.as_ptr(), out)
        })
    }

    /// The value of the script `source`; `None`, with the exception it raised cleared, when the
    /// engine refuses it.
    pub(crate) fn run_script(self, source: &str) -> Result<Option<napi_value>> {
        let script = self.string(source)?;
        // SAFETY: see above.
        match create(|out| unsafe { sys::napi_run_script(self.env, script, out) }) {
            Ok(value) => Ok(Some(value)),
            Err(_) => {
                let mut exception = ptr::null_mut();
                // SAFETY: see above; clears this environment's pending exception, if any.
                unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exception) };
                Ok(None)
            }
        }
    }
}

impl FromNapiValue for Signal {
    /// # Safety
    /// `env` and `value` come from a live callback scope, as for every napi conversion.
    unsafe fn from_napi_value(env: napi_env, value: napi_value) -> Result<Self> {
        // SAFETY: the caller's scope and value, which napi guarantees live (above).
        let object = unsafe { Object::from_napi_value(env, value)? };
        let aborted = object.get::<bool>("aborted")?.unwrap_or(false);
        // SAFETY: as above.
        let inner = unsafe { AbortSignal::from_napi_value(env, value)? };
        Ok(Signal::new(inner, aborted))
    }
}

impl<T: Serialize> ToNapiValue for Written<T> {
    /// # Safety
    /// `env` is the live environment napi passes when it resolves the function's promise.
    unsafe fn to_napi_value(env: napi_env, val: Self) -> Result<napi_value> {
        let env = Env::from_raw(env);
        Ok(crate::to_js(&env, &val.0)?.raw())
    }
}

/// `node_api_create_external_string_latin1`, as Node declares it.
type ExternalLatin1 = unsafe extern "C" fn(
    napi_env,
    *const std::ffi::c_char,
    isize,
    sys::napi_finalize,
    *mut std::ffi::c_void,
    *mut napi_value,
    *mut bool,
) -> napi_status;

/// `node_api_create_external_string_latin1` of the running Node, if it has one. Looked up at run
/// time: bound at load, an addon would not load in a Node without it.
fn external_latin1() -> Option<ExternalLatin1> {
    static FOUND: std::sync::OnceLock<Option<ExternalLatin1>> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        #[cfg(unix)]
        {
            // SAFETY: `dlsym` with a NUL-terminated name searches the loaded objects; Node exports
            // its Node-API symbols for addons. A non-null result is that function, whose C
            // declaration `ExternalLatin1` matches.
            let found = unsafe {
                libc::dlsym(
                    libc::RTLD_DEFAULT,
                    c"node_api_create_external_string_latin1".as_ptr(),
                )
            };
            (!found.is_null()).then(|| {
                // SAFETY: `found` is the non-null address of Node's
                // `node_api_create_external_string_latin1`, whose C signature `ExternalLatin1`
                // declares; a function pointer and a data pointer have the same size here.
                unsafe { std::mem::transmute::<*mut libc::c_void, ExternalLatin1>(found) }
            })
        }
        #[cfg(not(unix))]
        {
            None
        }
    })
}

/// The finalizer of [`RawEnv::latin1_shared`]'s strings: drops the reference it holds.
unsafe extern "C" fn release_shared(
    _env: napi_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    // SAFETY: `hint` is the `Box<Arc<Vec<u8>>>` `latin1_shared` leaked for this string; N-API calls
    // this once per string.
    drop(unsafe { Box::from_raw(hint.cast::<Arc<Vec<u8>>>()) });
}

/// mimalloc's `purge_delay` option (its position in mimalloc's option list).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Sets mimalloc's purge delay to 0: freed memory goes back to the system at once.
pub(crate) fn purge_at_once() {
    // SAFETY: sets one integer option; mimalloc reads options atomically and allows changes at
    // any time.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
}

/// Collects the calling thread's own mimalloc heap, handing its freed pages back.
pub(crate) fn collect_own_heap() {
    // SAFETY: collects the calling thread's own heap; mimalloc allows it at any time.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
