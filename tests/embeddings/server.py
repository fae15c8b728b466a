"""An OpenAI-compatible `POST /v1/embeddings` server for the tests of
retrieval by meaning, computing a sentence-transformers BERT model (such
as all-MiniLM-L6-v2) from its folder with numpy, the `tokenizers` package
and `safetensors`: an implementation independent of ai-tools' candle one,
which the tests compare against it.

What it computes is what sentence-transformers computes for the folder:
the BERT encoder's last hidden states, pooled as `1_Pooling/config.json`
says (mean by default), L2-normalised when `modules.json` lists a
Normalize module (or has no `modules.json`); inputs cut at
`sentence_bert_config.json`'s `max_seq_length`.

Usage: server.py MODEL_DIR [--name NAME] [--port PORT]
Prints `listening on PORT` once it serves; answers until killed. A request
whose `model` is not NAME (default: the folder's name) gets a 404, as
OpenAI answers an unknown model; `GET /requests` says how many embedding
requests and inputs it has answered.
"""

import argparse
import json
import math
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer


def erf(x):
    """erf to within 1.5e-7 (Abramowitz and Stegun 7.1.26), vectorised."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
        + 0.254829592
    ) * t * np.exp(-x * x)
    return sign * y


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class Model:
    def __init__(self, folder):
        with open(os.path.join(folder, "config.json")) as f:
            self.config = json.load(f)
        raw = load_file(os.path.join(folder, "model.safetensors"))
        prefix = "bert." if any(k.startswith("bert.") for k in raw) else ""
        self.w = {k[len(prefix):]: v.astype(np.float64) for k, v in raw.items()}
        self.tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tokenizer.no_padding()
        max_len = self.config["max_position_embeddings"]
        sbert = os.path.join(folder, "sentence_bert_config.json")
        if os.path.exists(sbert):
            with open(sbert) as f:
                max_len = min(max_len, json.load(f).get("max_seq_length", max_len))
        self.tokenizer.enable_truncation(max_len)
        self.pooling = "mean"
        self.normalize = True
        modules = os.path.join(folder, "modules.json")
        if os.path.exists(modules):
            with open(modules) as f:
                listed = json.load(f)
            self.normalize = any(m["type"].endswith("Normalize") for m in listed)
            for m in listed:
                if m["type"].endswith("Pooling"):
                    with open(os.path.join(folder, m["path"], "config.json")) as f:
                        pooling = json.load(f)
                    if pooling.get("pooling_mode_cls_token"):
                        self.pooling = "cls"
                    elif pooling.get("pooling_mode_max_tokens"):
                        self.pooling = "max"

    def linear(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def embed(self, text):
        c, w = self.config, self.w
        eps = c["layer_norm_eps"]
        ids = np.array(self.tokenizer.encode(text).ids)
        n = len(ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        heads = c["num_attention_heads"]
        size = c["hidden_size"] // heads
        for i in range(c["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            split = lambda t: t.reshape(n, heads, size).transpose(1, 0, 2)
            q = split(self.linear(x, p + "attention.self.query"))
            k = split(self.linear(x, p + "attention.self.key"))
            v = split(self.linear(x, p + "attention.self.value"))
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            attended = (scores @ v).transpose(1, 0, 2).reshape(n, heads * size)
            x = layer_norm(
                self.linear(attended, p + "attention.output.dense") + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                eps,
            )
            inner = gelu(self.linear(x, p + "intermediate.dense"))
            x = layer_norm(
                self.linear(inner, p + "output.dense") + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
                eps,
            )
        if self.pooling == "cls":
            pooled = x[0]
        elif self.pooling == "max":
            pooled = x.max(0)
        else:
            pooled = x.mean(0)
        if self.normalize:
            pooled = pooled / max(np.linalg.norm(pooled), 1e-12)
        return [float(v) for v in pooled]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("--name")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    model = Model(args.model_dir)
    name = args.name or os.path.basename(os.path.normpath(args.model_dir))
    counts = {"requests": 0, "inputs": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/requests":
                with lock:
                    self.answer(200, dict(counts))
            else:
                self.answer(404, {"error": {"message": "not found"}})

        def do_POST(self):
            if self.path != "/v1/embeddings":
                return self.answer(404, {"error": {"message": f"no route {self.path}"}})
            length = int(self.headers.get("content-length", "0"))
            try:
                request = json.loads(self.rfile.read(length))
            except ValueError as e:
                return self.answer(400, {"error": {"message": f"not JSON: {e}"}})
            if request.get("model") != name:
                return self.answer(
                    404,
                    {"error": {"message": f"The model `{request.get('model')}` does not exist"}},
                )
            inputs = request.get("input")
            if isinstance(inputs, str):
                inputs = [inputs]
            if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
                return self.answer(400, {"error": {"message": "`input` is a string or a list of strings"}})
            with lock:
                counts["requests"] += 1
                counts["inputs"] += len(inputs)
            data = [
                {"object": "embedding", "index": i, "embedding": model.embed(text)}
                for i, text in enumerate(inputs)
            ]
            self.answer(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": name,
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                },
            )

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
