"""Write examples/ue/outputs.jsonl: generated stored model outputs for the example config.

    python examples/ue/make_data.py && assay ue examples/ue/config.yaml
"""

import json
from pathlib import Path

from assay_uncertainty.demo import generate_records

if __name__ == "__main__":
    out = Path(__file__).with_name("outputs.jsonl")
    out.write_text("".join(json.dumps(r) + "\n" for r in generate_records(300, seed=1)), encoding="utf-8")
    print(f"wrote {out}")
