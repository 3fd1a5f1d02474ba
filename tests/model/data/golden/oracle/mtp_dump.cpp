// mtp_dump.cpp -- oracle for the MTP ("nextn") head of a qwen35 GGUF, computed by libllama (CPU).
// Reproduces the flow of llama.cpp's common/speculative.cpp (common_speculative_impl_draft_mtp):
//   * target context: model loaded with load_mtp=true, llama_set_embeddings_nextn(ctx_tgt, true, masked=false)
//     -> h_nextn(p) = output_norm(last trunk hidden) for every token p of the batch
//   * MTP context: same model, ctx_type = LLAMA_CONTEXT_TYPE_MTP, n_rs_seq = 0, own KV (only the MTP layer),
//     llama_set_embeddings_nextn(ctx_mtp, true, masked=true)
//   * MTP row at position q carries token t_q and embd = h_nextn(q-1); row q=0 carries h = zeros
//     (speculative.cpp's pending_h starts zeroed). Its logits guess t_{q+1}.
//   In the brief's numbering "row p" (token t_{p+1}, h(p)) is MTP position q = p+1.
//
// Build:  g++ -O2 -std=c++17 mtp_dump.cpp -I$LL/include -I$LL/ggml/include -I$LL/src -L$LL/build/bin \
//             -lllama -lggml -lggml-base -Wl,-rpath,$LL/build/bin -o mtp_dump
// Usage:  mtp_dump -m MODEL.gguf -s SEQS.txt -o OUTDIR [--threads N] [--fa auto|on|off]   (defaults: 1 thread, FA auto = the golden's)
// Writes, in OUTDIR, per sequence appended (float32 LE, row-major [rows][n_vocab]):
//   mtp_batch.bin   MTP logits, n rows (pos 0..n-1) decoded as ONE batch (rows 1..n-1 stored: n-1 rows)
//   mtp_incr.bin    same rows decoded one llama_decode per row (incremental, as draft() does)
//   mtp_nozero.bin  variant: no pos-0 zero-h row; rows (t_{p+1}, h(p)) at pos p+1, one batch (n-1 rows)
//   mtp_pos_p.bin   variant: no zero row; rows (t_{p+1}, h(p)) at pos p (0..n-2), one batch (n-1 rows)
//   tgt.bin         target logits at every position (n rows)
//   h.bin           target h_nextn at every position (n rows of n_embd)
//   meta.txt        n_vocab n_embd, then per sequence: n
#include "llama.h"
#include "llama-ext.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static void log_cb(ggml_log_level level, const char * text, void *) {
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN || getenv("MTP_VERBOSE")) fputs(text, stderr);
}

struct Row { llama_token tok; llama_pos pos; const float * h; bool out; };

// A batch carrying BOTH token and embd (as speculative.cpp builds it: llama_batch_init with embd, plus malloc'd token).
static int decode_rows(llama_context * ctx, const std::vector<Row> & rows, int n_embd, const std::vector<float> & zeros) {
    const int n = (int) rows.size();
    llama_batch b = llama_batch_init(n, n_embd, 1);
    b.token = (llama_token *) malloc(sizeof(llama_token) * n);
    for (int i = 0; i < n; i++) {
        b.token[i] = rows[i].tok;
        b.pos[i] = rows[i].pos;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = rows[i].out;
        memcpy(b.embd + (size_t) i * n_embd, rows[i].h ? rows[i].h : zeros.data(), sizeof(float) * n_embd);
    }
    b.n_tokens = n;
    int rc = llama_decode(ctx, b);
    free(b.token); b.token = nullptr;
    llama_batch_free(b);
    return rc;
}

int main(int argc, char ** argv) {
    std::string model_path, seqs_path, out_dir;
    int n_threads = 1, fa = LLAMA_FLASH_ATTN_TYPE_AUTO;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&]() -> std::string { if (i + 1 >= argc) { fprintf(stderr, "missing value\n"); exit(1); } return argv[++i]; };
        if (a == "-m") model_path = next();
        else if (a == "-s") seqs_path = next();
        else if (a == "-o") out_dir = next();
        else if (a == "--threads") n_threads = atoi(next().c_str());
        else if (a == "--fa") { std::string v = next(); fa = v == "auto" ? -1 : v == "on" ? 1 : v == "off" ? 0 : atoi(v.c_str()); }
        else { fprintf(stderr, "unknown arg %s\n", a.c_str()); return 1; }
    }
    if (model_path.empty() || seqs_path.empty() || out_dir.empty()) {
        fprintf(stderr, "usage: %s -m MODEL -s SEQS -o OUTDIR [--threads N]\n", argv[0]); return 1;
    }
    std::vector<std::vector<int>> seqs;
    { std::ifstream f(seqs_path); std::string line;
      while (std::getline(f, line)) { std::istringstream ss(line); std::vector<int> v; int x; while (ss >> x) v.push_back(x); if (!v.empty()) seqs.push_back(v); } }

    llama_log_set(log_cb, nullptr);
    llama_backend_init();

    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    mp.load_mtp = true;                       // common.cpp: load_mtp = (spec type draft-mtp requested)
    llama_model * model = llama_model_load_from_file(model_path.c_str(), mp);
    if (!model) { fprintf(stderr, "load failed\n"); return 1; }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);
    const int n_embd = llama_model_n_embd_out(model);
    fprintf(stderr, "n_vocab=%d n_embd_out=%d n_layer=%d n_layer_nextn=%d\n", n_vocab, n_embd,
            llama_model_n_layer(model), llama_model_n_layer_nextn(model));

    // same context settings as dump_logits.cpp (the golden): n_ctx 2048, n_batch/n_ubatch 2048, FA auto, F16 KV
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 2048; cp.n_batch = 2048; cp.n_ubatch = 2048; cp.n_seq_max = 1;
    cp.n_threads = n_threads; cp.n_threads_batch = n_threads;
    cp.flash_attn_type = (llama_flash_attn_type) fa;
    cp.type_k = GGML_TYPE_F16; cp.type_v = GGML_TYPE_F16;
    cp.no_perf = true;
    llama_context * ctx_tgt = llama_init_from_model(model, cp);
    if (!ctx_tgt) { fprintf(stderr, "target ctx failed\n"); return 1; }

    // as common_speculative_init_result: ctx_type MTP, n_rs_seq 0, ctx_other = ctx_tgt (ignored for qwen35)
    llama_context_params cpm = cp;
    cpm.ctx_type = LLAMA_CONTEXT_TYPE_MTP;
    cpm.n_rs_seq = 0;
    cpm.ctx_other = ctx_tgt;
    llama_context * ctx_mtp = llama_init_from_model(model, cpm);
    if (!ctx_mtp) { fprintf(stderr, "MTP ctx failed\n"); return 1; }

    llama_set_embeddings_nextn(ctx_tgt, true, /*masked*/ false);
    llama_set_embeddings_nextn(ctx_mtp, true, /*masked*/ true);
    fprintf(stderr, "ctx_other(mtp)==ctx_tgt: %d (is_mem_shared in speculative.cpp)\n", (int) (llama_get_ctx_other(ctx_mtp) == ctx_tgt));

    auto open = [&](const char * name) { FILE * f = fopen((out_dir + "/" + name).c_str(), "wb"); if (!f) { perror(name); exit(1); } return f; };
    FILE * f_batch = open("mtp_batch.bin"), * f_incr = open("mtp_incr.bin"), * f_nz = open("mtp_nozero.bin"),
         * f_pp = open("mtp_pos_p.bin"), * f_tgt = open("tgt.bin"), * f_h = open("h.bin"), * f_meta = open("meta.txt");
    fprintf(f_meta, "%d %d\n", n_vocab, n_embd);
    const std::vector<float> zeros(n_embd, 0.0f);

    for (const auto & s : seqs) {
        const int n = (int) s.size();
        fprintf(f_meta, "%d\n", n);
        llama_memory_clear(llama_get_memory(ctx_tgt), true);

        // ---- target: one batch, logits at every position
        {
            llama_batch b = llama_batch_init(n, 0, 1);
            for (int i = 0; i < n; i++) { b.token[i] = s[i]; b.pos[i] = i; b.n_seq_id[i] = 1; b.seq_id[i][0] = 0; b.logits[i] = 1; }
            b.n_tokens = n;
            if (llama_decode(ctx_tgt, b)) { fprintf(stderr, "target decode failed\n"); return 1; }
            llama_batch_free(b);
        }
        for (int i = 0; i < n; i++) fwrite(llama_get_logits_ith(ctx_tgt, i), sizeof(float), n_vocab, f_tgt);
        std::vector<float> h((size_t) n * n_embd);
        memcpy(h.data(), llama_get_embeddings_nextn(ctx_tgt), sizeof(float) * h.size());   // speculative.cpp process()
        fwrite(h.data(), sizeof(float), h.size(), f_h);
        auto H = [&](int p) { return h.data() + (size_t) p * n_embd; };

        // ---- MTP, one batch: row q = (t_q, h(q-1)) at pos q, row 0 has h = zeros; outputs at q = 1..n-1
        llama_memory_clear(llama_get_memory(ctx_mtp), true);
        {
            std::vector<Row> rows;
            for (int q = 0; q < n; q++) rows.push_back({ s[q], q, q == 0 ? nullptr : H(q - 1), q >= 1 });
            if (int rc = decode_rows(ctx_mtp, rows, n_embd, zeros)) { fprintf(stderr, "MTP batch decode failed rc=%d\n", rc); return 1; }
            for (int q = 1; q < n; q++) fwrite(llama_get_logits_ith(ctx_mtp, q), sizeof(float), n_vocab, f_batch);
        }
        // ---- MTP, incremental: one llama_decode per row (row 0 without output, like the prefill catch-up)
        llama_memory_clear(llama_get_memory(ctx_mtp), true);
        for (int q = 0; q < n; q++) {
            std::vector<Row> rows = { { s[q], q, q == 0 ? nullptr : H(q - 1), q >= 1 } };
            if (int rc = decode_rows(ctx_mtp, rows, n_embd, zeros)) { fprintf(stderr, "MTP incr decode failed rc=%d\n", rc); return 1; }
            if (q >= 1) fwrite(llama_get_logits_ith(ctx_mtp, 0), sizeof(float), n_vocab, f_incr);
        }
        // ---- variant: no zero-h row; rows (t_{p+1}, h(p)) at pos p+1
        llama_memory_clear(llama_get_memory(ctx_mtp), true);
        {
            std::vector<Row> rows;
            for (int p = 0; p + 1 < n; p++) rows.push_back({ s[p + 1], p + 1, H(p), true });
            if (int rc = decode_rows(ctx_mtp, rows, n_embd, zeros)) { fprintf(stderr, "MTP nozero decode failed rc=%d\n", rc); return 1; }
            for (int p = 0; p + 1 < n; p++) fwrite(llama_get_logits_ith(ctx_mtp, p), sizeof(float), n_vocab, f_nz);
        }
        // ---- variant: no zero-h row; rows (t_{p+1}, h(p)) at pos p
        llama_memory_clear(llama_get_memory(ctx_mtp), true);
        {
            std::vector<Row> rows;
            for (int p = 0; p + 1 < n; p++) rows.push_back({ s[p + 1], p, H(p), true });
            if (int rc = decode_rows(ctx_mtp, rows, n_embd, zeros)) { fprintf(stderr, "MTP pos_p decode failed rc=%d\n", rc); return 1; }
            for (int p = 0; p + 1 < n; p++) fwrite(llama_get_logits_ith(ctx_mtp, p), sizeof(float), n_vocab, f_pp);
        }
        fprintf(stderr, "sequence n=%d done\n", n);
    }
    for (FILE * f : { f_batch, f_incr, f_nz, f_pp, f_tgt, f_h, f_meta }) fclose(f);
    llama_free(ctx_mtp);
    llama_free(ctx_tgt);
    llama_model_free(model);
    return 0;
}
