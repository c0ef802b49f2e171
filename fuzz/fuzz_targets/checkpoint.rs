//! KRaft checkpoint images and metadata records: see
//! `rlmeta::batch::properties::check_checkpoint`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(why) = rlmeta::batch::properties::check_checkpoint(data) {
        panic!("{why}");
    }
});
