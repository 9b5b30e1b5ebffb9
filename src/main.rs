// Claims extraction from a big mbox allocates millions of small strings;
// mimalloc reads a 50 MB thread in about half the time glibc's malloc
// takes (scripts/bench-claims).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(lab::cli::main());
}
