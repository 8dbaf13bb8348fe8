# Shared by scripts/run and scripts/test: make .venv exist and hold this package.
# Usage: . scripts/_venv.sh EXTRAS   (EXTRAS like "" or "test,servers")
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
extras="${1:-}"
python_bin="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
    echo "creating $venv" >&2
    "$python_bin" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
fi

# Reinstall only when pyproject.toml or the extras changed since the last install,
# so a second run starts at once.
stamp="$venv/.installed-$(printf '%s' "$extras" | tr ',' '-')"
if [[ ! -f "$stamp" || "$root/pyproject.toml" -nt "$stamp" ]]; then
    spec="$root"
    [[ -n "$extras" ]] && spec="$root[$extras]"
    echo "installing $spec into $venv" >&2
    "$venv/bin/python" -m pip install --quiet --editable "$spec" >&2
    touch "$stamp"
fi
