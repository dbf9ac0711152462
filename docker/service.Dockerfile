# One image for the API and both workers. The GPU worker builds it on a CUDA base with the gpu extra:
#   docker build -f docker/service.Dockerfile --build-arg BASE_IMAGE=nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04 \
#     --build-arg EXTRAS=gpu .
ARG BASE_IMAGE=python:3.11-slim-bookworm

# Choreo Studio, the page the API serves at /studio: its sources plus three.js from npm (no CDN).
FROM node:20-bookworm-slim AS studio
WORKDIR /studio
COPY studio/package.json studio/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY studio/build.mjs ./
COPY studio/src ./src
RUN node build.mjs

FROM ${BASE_IMAGE}
ARG EXTRAS=""
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ffmpeg libsndfile1 python3 python3-pip python3-venv curl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
RUN python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
COPY pyproject.toml README.md LICENSE ./
COPY choreo ./choreo
COPY api ./api
COPY worker ./worker
COPY engines ./engines
COPY exporters ./exporters
COPY --from=studio /studio/dist /app/studio/dist
ENV CHOREO_STUDIO_DIR=/app/studio/dist
RUN pip install --upgrade pip && if [ -n "$EXTRAS" ]; then pip install ".[${EXTRAS}]"; else pip install .; fi
RUN useradd --create-home --uid 10001 choreo
USER choreo
EXPOSE 8000
# --no-proxy-headers: the API reads X-Forwarded-For itself, from CHOREO_TRUSTED_PROXIES only.
CMD ["uvicorn", "--factory", "api.main:create_app", "--host", "0.0.0.0", "--port", "8000", "--no-proxy-headers"]
