//! Position strings are checked where every command reads them
//! (`rules/src/<game>/`): a placement beyond the game's sets and a last move
//! that no ply could have been are refused, naming the field, by `analyse
//! --position`, `show`, `analysis`'s `position` and `engine`'s `position`.

use crate::common::{err, mz, mz_stdin, out};

const THIRTY_QUEENS: &str = "QQQQ/QQQQ/QQQQ/QQQQ/QQQQ/QQQQ/QQQQ/QQ2 S 0 0 - - 0 0";
const EMPTY_DESTINATION: &str = "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ N 0 0 b4c5 - 0 0";

#[test]
fn impossible_positions_are_refused_everywhere() {
    for (p, why) in [(THIRTY_QUEENS, "field placement: 30 pieces"), (EMPTY_DESTINATION, "destination c5 is empty")] {
        let o = mz(&["analyse", "--game", "martian-chess", "--engine", "alphabeta", "--depth", "1", "--position", p]);
        assert!(!o.status.success() && err(&o).contains(why), "{}", err(&o));
        let o = mz(&["show", "--game", "martian-chess", "--position", p]);
        assert!(!o.status.success() && err(&o).contains(why), "{}", err(&o));
        let q = format!("{{\"id\":1,\"maxVisits\":4,\"position\":\"{p}\"}}\n");
        let o = mz_stdin(&["analysis", "--game", "martian-chess", "--model", "none"], &q);
        assert!(out(&o).contains("\"error\"") && out(&o).contains(why), "{}{}", out(&o), err(&o));
        let o = mz_stdin(
            &["engine", "--engine", "alphabeta"],
            &format!("game martian-chess\nposition fen {p}\ngo depth 1\n"),
        );
        assert!(out(&o).contains(why) || err(&o).contains(why), "{}{}", out(&o), err(&o));
        assert!(!out(&o).contains("bestmove"), "{}", out(&o));
    }
    // Four players: more than the four sets' 36 pieces of 72 points.
    let four = "QQD2DQQ/QDP2PDQ/DPP2PPD/4P3/3P4/DPP2PPD/QDP2PDQ/QQD2DQQ SW 0 0 0 0 - 0 0";
    let o = mz(&["show", "--game", "martian-chess-4p", "--position", four]);
    assert!(!o.status.success() && err(&o).contains("38 pieces of 74 points"), "{}", err(&o));
    // Jetan: more Fliers than a side has (20 pieces per side, jetan.md §2).
    let jetan = "WLDFPCFDLW/TNNNNNNNNT/10/10/F9/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0";
    let o = mz(&["show", "--game", "jetan", "--position", jetan]);
    assert!(!o.status.success() && err(&o).contains("Flier"), "{}", err(&o));
}

/// Runs of empty squares: the two-player string reads split runs (`22` for
/// `4`, spec §10's project note) and prints them back joined; the
/// four-player syntax (§14.8: one digit a run, never two in a row) refuses
/// them, naming the run. Both through `show --position`.
#[test]
fn split_empty_runs_are_read_in_two_player_strings_only() {
    let o =
        mz(&["show", "--game", "martian-chess", "--position", "QQD1/QDP1/DPP1/22/1111/1PPD/1PDQ/1DQQ S 0 0 - - 0 0"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0"), "canonical: {}", out(&o));
    let four = "QQD2DQQ/QDP2PDQ/DPP2PPD/44/8/DPP2PPD/QDP2PDQ/QQD2DQQ SW 0 0 0 0 - 0 0";
    let o = mz(&["show", "--game", "martian-chess-4p", "--position", four]);
    assert!(!o.status.success(), "{}", out(&o));
    assert!(err(&o).contains("two digits in a row"), "{}", err(&o));
    let o = mz(&["show", "--game", "martian-chess-4p", "--position", &four.replace("/44/", "/8/")]);
    assert!(o.status.success(), "the same position written with one digit: {}", err(&o));
}
