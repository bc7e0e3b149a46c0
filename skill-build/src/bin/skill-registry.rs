//! `skill-registry validate | diff | convert`: see [`skill_build::cli`].

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = skill_build::cli::run(&args, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(code);
}
