# The kai image: one binary, every component (`kai scheduler`, `kai binder`, `kai podgrouper`,
# `kai admission`, `kai controllers`, `kai scale-adjuster`, `kai numa-exporter`,
# `kai resource-reservation`, `kai run`).
# Built from Debian 12 packages only:
#   docker build -t kai:latest .
#   kai install --print --image <registry>/kai:<tag> | kubectl apply -f -
FROM debian:12 AS build
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends build-essential g++ cmake ninja-build pkg-config \
      libyaml-cpp-dev rapidjson-dev libcli11-dev libfmt-dev libspdlog-dev libcurl4-openssl-dev libssl-dev \
      libboost-dev prometheus-cpp-dev libgrpc++-dev libprotobuf-dev protobuf-compiler \
      protobuf-compiler-grpc python3 >/dev/null
WORKDIR /src
COPY CMakeLists.txt ./
COPY cmake cmake
COPY src src
COPY deploy deploy
COPY bench bench
COPY fuzz fuzz
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKAI_BUILD_TESTS=OFF \
      -DKAI_BUILD_BENCH=OFF && cmake --build /build --target kai && strip /build/kai

FROM debian:12-slim
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends libyaml-cpp0.7 libspdlog1.10 libfmt9 libcurl4 libssl3 libprometheus-cpp-core1.0 \
      libgrpc++1.51 libprotobuf32 ca-certificates \
      >/dev/null \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/kai /usr/local/bin/kai
# The non-root user the Deployments' securityContext names.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kai"]
