//! The placement ladder: forms ruled out from the declared needs before anything runs, forms
//! that give way when their run does not fit, errors that are answers passed through, and the
//! record of it all in order.

use crate::tests::common;
use common::*;

use lucent::error::Error;
use lucent::gpu::GpuOptions;
use lucent::placement::{Form, GiveWay, Ladder, Needs, Placement};

#[test]
fn the_ladder_rules_out_gives_way_and_records_why_in_order() {
    let small = open(GpuOptions { max_buffer_bytes: Some(4096), device_memory_bytes: Some(32768), ..GpuOptions::from_env().unwrap() });
    let mut ladder = Ladder::new();
    // Declared needs against the two device budgets, checked before anything runs.
    assert!(ladder.fits(Form::Whole, &small, Needs { buffer: 4096, device: 32768 }));
    assert!(!ladder.fits(Form::Whole, &small, Needs { buffer: 4097, device: 0 }));
    assert!(!ladder.fits(Form::Chunks, &small, Needs { buffer: 0, device: 32769 }));
    // A limit gives way on either rule; a device out of memory only where the next form holds
    // less at once; any other error is the answer.
    let too_large = || Err::<(), _>(Error::TooLarge { what: "a test array".into(), bytes: 10, limit: 5 });
    let out_of_memory = || Err::<(), _>(Error::OutOfMemory("a test allocation".into()));
    assert_eq!(ladder.attempt(Form::Whole, GiveWay::OnLimit, too_large).unwrap(), None);
    assert!(matches!(ladder.attempt(Form::Whole, GiveWay::OnLimit, out_of_memory), Err(Error::OutOfMemory(_))));
    assert_eq!(ladder.attempt(Form::Chunks, GiveWay::OnMisfit, out_of_memory).unwrap(), None);
    assert!(matches!(ladder.attempt(Form::Slabs, GiveWay::OnMisfit, || Err::<(), _>(Error::Invalid("bad".into()))), Err(Error::Invalid(_))));
    ladder.rule_out(Form::Slabs, "the halo would outweigh a slab");
    assert_eq!(ladder.attempt(Form::Tiles, GiveWay::OnMisfit, || Ok(7)).unwrap(), Some(7));
    let placement = ladder.placed(Form::Tiles, 4);
    let declined: Vec<Form> = placement.declined.iter().map(|d| d.form).collect();
    assert_eq!(declined, [Form::Whole, Form::Chunks, Form::Whole, Form::Chunks, Form::Slabs]);
    let why: Vec<&str> = placement.declined.iter().map(|d| d.why.as_str()).collect();
    assert!(why[0].contains("4097") && why[0].contains("binding"), "{why:?}");
    assert!(why[1].contains("32769") && why[1].contains("LUCENT_DEVICE_MEMORY_BYTES"), "{why:?}");
    assert!(why[2].contains("a test array") && why[3].contains("a test allocation"), "{why:?}");
    assert_eq!((placement.form, placement.pieces), (Form::Tiles, 4));
    assert_eq!(Placement::planned(Form::Slabs, 3), Placement { form: Form::Slabs, pieces: 3, declined: vec![] });
}
