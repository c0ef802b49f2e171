//! KRaft checkpoint images and metadata records: see
//! `rlmeta::testing::batch::check_checkpoint`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(why) = rlmeta::testing::batch::check_checkpoint(data) {
        panic!("{why}");
    }
});
