#!/usr/bin/env python3
"""Sanity checks + final JSON/BIN for the MTP oracle. Usage: check_and_write.py RAWDIR GOLDEN_PREFIX OUTDIR COMMIT"""
import json, sys, os, numpy as np
raw, gold, out, commit = sys.argv[1:5]
meta = open(f"{raw}/meta.txt").read().split()
V, E = int(meta[0]), int(meta[1]); ns = [int(x) for x in meta[2:]]
ld = lambda n: np.fromfile(f"{raw}/{n}.bin", dtype="<f4")
tgt = ld("tgt").reshape(-1, V); mb = ld("mtp_batch").reshape(-1, V); mi = ld("mtp_incr").reshape(-1, V)
nz = ld("mtp_nozero").reshape(-1, V); pp = ld("mtp_pos_p").reshape(-1, V)
gj = json.load(open(gold + ".json")); gb = np.fromfile(gold + ".bin", dtype="<f4")
gseq = {tuple(s["input_ids"]): s for s in gj["sequences"]}

def margin(x):
    s = np.sort(x, axis=1); return s[:, -1] - s[:, -2]

report = {}
seqs_out = []; off_t = off_m = 0; bin_off = 0; allrows = []
for n in ns:
    T = tgt[off_t:off_t + n]; off_t += n
    B = mb[off_m:off_m + n - 1]; I = mi[off_m:off_m + n - 1]; NZ = nz[off_m:off_m + n - 1]; PP = pp[off_m:off_m + n - 1]; off_m += n - 1
    ids = [int(x) for x in open(f"{raw}/../seqs.txt").read().splitlines()[len(seqs_out)].split()]
    assert len(ids) == n
    g = gseq[tuple(ids)]
    G = gb[g["bin_offset_floats"]: g["bin_offset_floats"] + len(g["logit_positions"]) * V].reshape(-1, V)
    Tg = T[g["logit_positions"]]
    rel = np.abs(Tg - G).max() / np.abs(G).max()
    r = {"n": n,
         "target_vs_golden_bin_max_abs": float(np.abs(Tg - G).max()), "target_vs_golden_bin_max_rel": float(rel),
         "target_argmax_equal_golden_argmax_all": bool((T.argmax(1) == np.array(g["argmax_all"])).all()),
         "mtp_batch_vs_incr_max_abs": float(np.abs(B - I).max()),
         "mtp_batch_vs_incr_argmax_equal": bool((B.argmax(1) == I.argmax(1)).all()),
         "min_top1_top2_margin": float(margin(B).min()),
         "variant_no_zero_row_max_abs": float(np.abs(B - NZ).max()),
         "variant_no_zero_row_argmax_agree": int((B.argmax(1) == NZ.argmax(1)).sum()),
         "variant_pos_p_max_abs": float(np.abs(B - PP).max()),
         "variant_pos_p_argmax_agree": int((B.argmax(1) == PP.argmax(1)).sum()),
         "mtp_argmax_hits_next_token_t_p2": int((B[:-1].argmax(1) == np.array(ids[2:])).sum()),
         "mtp_argmax_equal_target_argmax_at_p_plus_1": int((B.argmax(1) == T[1:].argmax(1)).sum()),
         }
    report[n] = r
    seqs_out.append({"input_ids": ids, "rows": n - 1, "bin_offset_floats": bin_off,
                     "argmax": [int(x) for x in B.argmax(1)],
                     "top1_top2_margin": [float("%.6g" % x) for x in margin(B)]})
    bin_off += (n - 1) * V; allrows.append(B)

os.makedirs(out, exist_ok=True)
np.concatenate(allrows).astype("<f4").tofile(f"{out}/tiny-qwen35-mtp-F16.mtp.bin")
how = ("Flow of llama.cpp common/speculative.cpp (draft-mtp) at %s, CPU, 1 thread, n_ctx=n_batch=n_ubatch=2048, FA auto, F16 KV. "
       "Target context (model loaded with load_mtp=true, default ctx type, llama_set_embeddings_nextn(tgt,true,masked=false)) decodes all n tokens "
       "in one batch; h_nextn(p) = output_norm(final trunk hidden state) (the NORMED hidden, qwen35.cpp graph builds it as build_norm(...output_norm) -> t_h_nextn) "
       "for every position p. MTP context: same llama_model, ctx_type=LLAMA_CONTEXT_TYPE_MTP, n_rs_seq=0, its OWN KV cache holding only the MTP layer (il=4; "
       "ctx_other is ignored for qwen35, no sharing with the target). As in process(), it is fed ONE batch of n rows: row at position q carries token t_q and "
       "embd h_nextn(q-1) (target h shifted right by one); the row at q=0 carries t_0 and an all-zero h (pending_h starts zeroed) and is part of the MTP KV. "
       "Logits were requested for rows q=1..n-1 (process() itself requests none; draft() requests the new row, which is the same computation, verified by an "
       "incremental one-row-per-decode run). Stored row p (p=0..n-2) = MTP logits at position q=p+1 for input (token t_{p+1}, h_nextn(p)), i.e. the guess of t_{p+2}."
       % commit)
doc = {"model": "tiny-qwen35-mtp-F16.gguf", "n_vocab": V, "llama_cpp_commit": commit, "how": how,
       "sequences": seqs_out, "sanity": {str(k): v for k, v in report.items()}}
with open(f"{out}/tiny-qwen35-mtp-F16.mtp.json", "w") as f:
    json.dump(doc, f, indent=1)
print(json.dumps(report, indent=1))
