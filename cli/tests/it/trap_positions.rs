//! The Jetan trap positions T1-T5 (`search/tests/jetan_traps.rs`) through `analyse` (MCTS without a network,
//! the same search as `engine --engine mcts-uniform`), at 100 and 400 visits:
//! the move printed is one of the good moves, which `search/tests/jetan_traps.rs`
//! computes by minimax over the rules (the positions are those after the
//! issue's moves from the start, as position strings).

use crate::common::{err, mz, out};

const CASES: [(&str, &str); 5] = [
    ("WLDF2FDLW/1NNNNN1NN1/T6N2/4C1P1T1/3c6/6f3/6f3/3n3n2/tn1nnnnn1t/wld2p1dlw b B - 15 15", "d6e7 d6g7"),
    ("WLDF1CFDLW/1NNNNN1NN1/T6N2/6P1T1/3c6/6f3/6f3/3n3n2/tn1nnnnn1t/wld2p1dlw o B - 14 14", "g7e10 g7i6 g7i8 g7j9"),
    (
        "WLDF2FDLW/TNNNNN1NNT/1P4N3/6C3/10/10/8p1/7n2/tnnnnnnn1t/wldfc1fdlw b OB - 5 5",
        "i4c3 i4c4 i4d3 i4e3 i4f1 i4f3 i4g3 i4i2 i4i3 i4j3",
    ),
    ("WLDF2FDLW/TNNNNN1NNT/1P4N3/6C3/1p8/10/10/7n2/tnnnnnnn1t/wldfc1fdlw o O - 6 6", "g7d5 g7d6 g7e5 g7e6 g7f5 g7f6"),
    ("WLDF2FDLW/TNNNNN1NNT/6N1P1/10/10/2p1C5/10/6n3/tnnnnn1nnt/wldfc1fdlw b - - 9 9", "c5a3 c5a4 c5a5 c5a6"),
];

#[test]
fn analyse_answers_the_princess_trap_positions() {
    for (position, good) in CASES {
        for visits in ["100", "400"] {
            let o = mz(&[
                "analyse",
                "--game",
                "jetan",
                "--engine",
                "mcts",
                "--visits",
                visits,
                "--top",
                "1",
                "--position",
                position,
            ]);
            assert!(o.status.success(), "{}", err(&o));
            let text = out(&o);
            let best = text
                .lines()
                .find_map(|l| l.strip_prefix("bestmove "))
                .and_then(|l| l.split_whitespace().next())
                .unwrap_or_else(|| panic!("no bestmove line: {text}"));
            assert!(good.split(' ').any(|g| g == best), "{position} at {visits} visits: {best}, not one of {good}");
        }
    }
}
