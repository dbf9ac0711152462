# Two commands matter: `make demo` and `make test`. Everything they need is installed here.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
DEMO_SONG := demo/Kevin_MacLeod_-_Vibe_Ace.ogg

.PHONY: demo test lint format system-deps venv studio bench up down clean

# Debian packages the project uses: assimp (independent reader of our files; its libassimp5 reads the
# teams' FBX and glTF motion files for the phrase libraries, through impasse), ffmpeg (AAC/M4A),
# libsndfile (decoding), Node.js (the Khronos glTF validator and three.js checks), docker-compose
# (validates docker-compose.yml; there is no Docker engine here), chromium (the Studio's browser tests,
# driven by Playwright; no browser is ever downloaded), redis-server (the service's fault-injection tests
# start and kill a Redis of their own), FluidSynth and its General MIDI soundfont (bench/beats.py renders
# its beat-truth songs with them; tests/bench checks the rendering). Installed only where missing.
SYSTEM_TOOLS := assimp:assimp-utils ffmpeg:ffmpeg node:nodejs npm:npm docker-compose:docker-compose \
  chromium:chromium redis-server:redis-server fluidsynth:fluidsynth
SOUNDFONT := /usr/share/sounds/sf2/FluidR3_GM.sf2
system-deps:
	@missing=""; for pair in $(SYSTEM_TOOLS); do cmd=$${pair%%:*}; pkg=$${pair##*:}; \
	  command -v $$cmd >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	ldconfig -p | grep -q libsndfile || missing="$$missing libsndfile1"; \
	ldconfig -p | grep -q libassimp.so.5 || missing="$$missing libassimp5"; \
	[ -f $(SOUNDFONT) ] || missing="$$missing fluid-soundfont-gm"; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing Debian packages:$$missing (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

$(VENV)/.installed: pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "make: $(PYTHON) is required"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,train,rtx]'
	touch $@

venv: system-deps $(VENV)/.installed

# Choreo Studio (served by the API at /studio): its sources and the pinned three.js from npm, copied
# into studio/dist by studio/build.mjs, so the page needs no CDN.
STUDIO_SOURCES := $(wildcard studio/src/*) studio/build.mjs studio/package-lock.json
studio/dist/index.html: $(STUDIO_SOURCES)
	cd studio && npm ci --no-audit --no-fund && node build.mjs

studio: system-deps studio/dist/index.html

demo: venv
	$(VENV)/bin/choreo render $(DEMO_SONG) -o out
	@echo "make demo: dance files are in out/"

test: venv studio
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/python -m pytest -q -ra

# mypy checks choreo/, engines/, exporters/, api/, worker/ and tests/harness/ ([tool.mypy] in pyproject.toml).
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: venv
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The speed benchmarks of this machine, as bench/README.md lists them (it says which benches are left
# out and why). -P: a bench script's folder must not shadow the packages it measures (bench/engines.py
# vs engines). service.py uses (and flushes) database 12 of the Redis at 127.0.0.1:6379.
bench: venv
	$(PY) -P bench/pipeline.py
	$(PY) -P bench/choreography.py
	$(PY) -P bench/exporters.py
	$(PY) -P bench/video.py
	$(PY) -P bench/engines.py --backends onnxruntime --threads 1 --batches 1,8 --chunks 128 --budget-s 0.5 \
	  --out bench/results/engines_guided_cpu.json
	$(PY) -P bench/engines.py --tensorrt-builds --calibration-dir ../shared/data/music/gpl
	$(PY) -P bench/service.py --cpu-workers 1,2 --songs 4
	$(PY) -P bench/service.py --load 200 --in-flight 16 --cpu-workers 2
	$(PY) -P bench/recovery.py --runs 5

# The service without Docker: Redis, SeaweedFS S3, the API on 127.0.0.1:8000 and both workers.
up: venv studio
	scripts/dev_up.sh

down:
	scripts/dev_down.sh

clean:
	rm -rf out .pytest_cache .ruff_cache .mypy_cache studio/dist
