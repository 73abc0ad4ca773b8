#!/usr/bin/env bash
# Extracts the Lee corpus (lee.cor: 50 news documents; similarities0-1.txt: human similarity
# ratings) from the pinned gensim 4.4.0 wheel into target/lee, for `cargo bench --bench semantic`.
# The wheel's sha256 is checked before anything is extracted.
set -euo pipefail
cd "$(dirname "$0")/.."
url=https://files.pythonhosted.org/packages/97/2c/c29701826c963b04a43d5d7b87573a74040387ab9219e65b10f377d22b5b/gensim-4.4.0-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl
sha256=4b73ff30af6ddd0d2ddf9473b1eb44603cd79ec14c87d93b75291802b991916c
mkdir -p target/lee
wheel=target/lee/gensim-4.4.0.whl
[ -f "$wheel" ] || curl -fsSL -o "$wheel" "$url"
echo "$sha256  $wheel" | sha256sum -c --quiet
unzip -o -j -q "$wheel" gensim/test/test_data/lee.cor gensim/test/test_data/similarities0-1.txt -d target/lee
echo "wrote target/lee/lee.cor and target/lee/similarities0-1.txt"
