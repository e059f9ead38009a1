"""Create examples/transformers/tiny-model: a 2-layer GPT-2-shaped model, trained for a few seconds.

No real model ships with assay, and nothing is downloaded: the weights start from a
seeded generator, the word-level tokenizer is built with the ``tokenizers`` library on the
vocabulary of qa.jsonl, and the model is trained on the first ``TRAIN_ROWS`` questions of
qa.jsonl ("Q: question A: answer <eos>") until it knows them. On the other questions it
guesses: some answers right, some wrong, which is what uncertainty estimation ranks.

    python examples/transformers/make_tiny_model.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRAIN_ROWS = 10


def vocabulary(path: Path) -> list[str]:
    words: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            words.update(row["question"].split())
            words.update(row["answer"].split())
    return sorted(words | {"Q:", "A:"})


def make_tiny_model(folder: Path = HERE / "tiny-model", *, seed: int = 0, steps: int = 150) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", "<unk>", *vocabulary(HERE / "qa.jsonl")])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(vocab), n_positions=128, n_embd=32, n_layer=2, n_head=2, bos_token_id=1,
                        eos_token_id=1, pad_token_id=0)
    model = GPT2LMHeadModel(config)
    rows = [json.loads(line) for line in (HERE / "qa.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [f"Q: {r['question']} A: {r['answer']} <eos>" for r in rows[:TRAIN_ROWS]]
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(steps):
        loss = model(**batch, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


if __name__ == "__main__":
    print(f"wrote {make_tiny_model(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / 'tiny-model')}")
