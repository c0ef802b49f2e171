//! Record batches (`.log` segment images): see `rlmeta::testing::batch::check_batches`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(why) = rlmeta::testing::batch::check_batches(data) {
        panic!("{why}");
    }
});
