//! Record batches (`.log` segment images): see `rlmeta::batch::properties::check_batches`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(why) = rlmeta::batch::properties::check_batches(data) {
        panic!("{why}");
    }
});
