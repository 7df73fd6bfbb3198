//! `web-fingerprint GAME SEED POSITIONS`: prints the native rules' record of
//! seeded random games (`martian_web::fingerprint`), which the wasm build must
//! reproduce exactly (`web/test/rules.mjs`).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        format!("usage: web-fingerprint GAME SEED POSITIONS (GAME: {})", martian_web::games::web_game_names(" or "));
    let [game, seed, n] = &args[..] else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    let (Ok(seed), Ok(n)) = (seed.parse::<u64>(), n.parse::<usize>()) else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    match martian_web::fingerprint::fingerprint(game, seed, n) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("web-fingerprint: {e}");
            ExitCode::from(2)
        }
    }
}
