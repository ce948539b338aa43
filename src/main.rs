//! The `retrylint` command line: parses arguments, calls the library, prints, and
//! maps outcomes to exit codes (0 clean, 1 findings or broken expectations, 2
//! invalid input or usage).

mod cli;

fn main() -> std::process::ExitCode {
    retrylint_alloc::prepare(retrylint::memory_limits::out_of_memory_message());
    cli::main()
}

// A large topology is millions of small allocations (nodes, names,
// findings): with mimalloc, `check` of the 10,000-service benchmark file took
// 0.40 s where glibc's allocator took 0.63 s. The wrapper names the memory
// limit when an allocation fails (src/memory_limits.rs).
#[global_allocator]
static ALLOCATOR: retrylint_alloc::NamedLimit = retrylint_alloc::NamedLimit;
