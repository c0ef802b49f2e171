//! Record values: see `rlmeta::testing::check_value_round_trip` for the property.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(why) = rlmeta::testing::check_value_round_trip(data) {
        panic!("{why}");
    }
});
