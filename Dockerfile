# The image `retrylint export kubernetes|compose` names by default:
#   docker build -t retrylint:latest .
# For a cluster, push it where the nodes pull from and export with
# `--image registry.example.com/retrylint:0.1.0`.
#
# Stage 1 builds the release binary with the locked dependencies; stage 2 is
# distroless (glibc and CA certificates, no shell, no package manager) and runs
# it as the image's non-root user, 65532, which the manifests name.

ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
# Everything `cargo build` reads: the manifest names the benches, and build.rs
# embeds the presets and fault scenarios.
COPY Cargo.toml Cargo.lock build.rs ./
COPY src src
COPY benches benches
COPY policies policies
COPY faults faults
RUN cargo build --release --locked --bin retrylint \
 && strip target/release/retrylint

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/retrylint /usr/local/bin/retrylint
USER 65532:65532
# 8080: the service's tier; 9090: /metrics, /retrylint/*, /healthz.
EXPOSE 8080 9090
ENTRYPOINT ["retrylint"]
CMD ["--help"]
