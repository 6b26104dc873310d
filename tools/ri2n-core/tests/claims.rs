//! One-switch mode's slave MAC claims (core/claims.rs): the map agrees
//! with the peers' own link MACs through any learning and forgetting, and
//! a MAC two peers claim goes to the later one.

use proptest::prelude::*;
use ri2n_core::claims::{buckets_for, Claim, Claims, Learned, LinkMacs};
use ri2n_core::peers::{Mac, Peer};
use ri2n_core::MAX_LINKS;
use std::collections::HashMap;

type P = Peer<u32, Box<ri2n_core::window::ReorderBuf<u32>>>;

/// Peers by slot (`None`: a free slot), as the peer table lends them.
struct Macs(Vec<Option<Box<P>>>);

impl LinkMacs for Macs {
    fn link_mac(&self, c: Claim) -> Mac {
        self.0[c.slot]
            .as_ref()
            .map_or([0; 6], |p| p.link_mac[c.link])
    }
    fn set_link_mac(&mut self, c: Claim, mac: Mac) {
        if let Some(p) = self.0[c.slot].as_mut() {
            p.link_mac[c.link] = mac;
        }
    }
}

fn setup(slots: usize) -> (Claims<Vec<u32>>, Macs) {
    let claims = Claims::new(vec![0u32; buckets_for(slots)], 0x5eed);
    (
        claims,
        Macs((0..slots).map(|_| Some(Box::<P>::default())).collect()),
    )
}

fn mac(n: u8) -> Mac {
    [2, 0, 0, 0, 0, n]
}

#[test]
fn a_slave_mac_two_peers_claim_goes_to_the_later_one() {
    let (mut claims, mut macs) = setup(4);
    let a = Claim { slot: 0, link: 1 };
    let b = Claim { slot: 2, link: 1 };
    assert_eq!(
        claims.learn(&mut macs, a, &mac(7)),
        Some(Learned {
            old: [0; 6],
            taken_from: None
        })
    );
    assert_eq!(claims.learn(&mut macs, a, &mac(7)), None, "nothing new");
    assert_eq!(
        claims.learn(&mut macs, b, &mac(7)),
        Some(Learned {
            old: [0; 6],
            taken_from: Some(a)
        })
    );
    assert_eq!(
        macs.link_mac(a),
        [0; 6],
        "the earlier claimant no longer sends to it"
    );
    assert_eq!(macs.link_mac(b), mac(7));
    assert_eq!(claims.owner(&mac(7), |c| macs.link_mac(c)), Some(b));
    // And back: each take is reported.
    assert_eq!(
        claims.learn(&mut macs, a, &mac(7)),
        Some(Learned {
            old: [0; 6],
            taken_from: Some(b)
        })
    );
}

#[test]
fn a_changed_slave_mac_frees_the_old_one() {
    let (mut claims, mut macs) = setup(2);
    let a = Claim { slot: 0, link: 0 };
    claims.learn(&mut macs, a, &mac(1));
    assert_eq!(
        claims.learn(&mut macs, a, &mac(2)),
        Some(Learned {
            old: mac(1),
            taken_from: None
        })
    );
    assert_eq!(claims.owner(&mac(1), |c| macs.link_mac(c)), None);
    let b = Claim { slot: 1, link: 0 };
    assert_eq!(
        claims.learn(&mut macs, b, &mac(1)).unwrap().taken_from,
        None,
        "the old MAC is free"
    );
    claims.forget(&macs, 1);
    macs.0[1] = None;
    assert_eq!(claims.owner(&mac(1), |c| macs.link_mac(c)), None);
    assert_eq!(claims.owner(&mac(2), |c| macs.link_mac(c)), Some(a));
}

#[derive(Debug, Clone)]
enum Op {
    Learn { slot: usize, link: usize, mac: u8 },
    Forget { slot: usize },
}

fn op(slots: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..slots, 0..MAX_LINKS, 1u8..24).prop_map(|(slot, link, mac)| Op::Learn { slot, link, mac }),
        1 => (0..slots).prop_map(|slot| Op::Forget { slot }),
    ]
}

proptest! {
    /// Against a model (MAC → claim): every learned MAC is found, owned by
    /// its last learner; the earlier one's MAC is cleared; forgotten peers
    /// own nothing. Few MACs over many claims, so chains collide and the
    /// deletions shift them.
    #[test]
    fn claims_follow_a_model(ops in proptest::collection::vec(op(6), 1..300)) {
        let slots = 6;
        let (mut claims, mut macs) = setup(slots);
        let mut model: HashMap<Mac, Claim> = HashMap::new();
        for o in ops {
            match o {
                Op::Learn { slot, link, mac: m } => {
                    if macs.0[slot].is_none() {
                        macs.0[slot] = Some(Box::default());
                    }
                    let c = Claim { slot, link };
                    let r = claims.learn(&mut macs, c, &mac(m));
                    let before = model.get(&mac(m)).copied();
                    if before == Some(c) {
                        prop_assert_eq!(r, None);
                    } else {
                        let r = r.unwrap();
                        prop_assert_eq!(r.taken_from, before);
                        model.retain(|_, v| *v != c);
                        model.insert(mac(m), c);
                    }
                }
                Op::Forget { slot } => {
                    claims.forget(&macs, slot);
                    macs.0[slot] = None;
                    model.retain(|_, v| v.slot != slot);
                }
            }
            for m in 1u8..24 {
                let owner = claims.owner(&mac(m), |c| macs.link_mac(c));
                prop_assert_eq!(owner, model.get(&mac(m)).copied());
            }
            for slot in 0..slots {
                for link in 0..MAX_LINKS {
                    let c = Claim { slot, link };
                    let m = macs.link_mac(c);
                    let held = model.iter().find(|(_, v)| **v == c).map(|(k, _)| *k);
                    prop_assert_eq!(if m == [0; 6] { None } else { Some(m) }, held);
                }
            }
        }
    }
}
