import json, sys, threading, logging
logging.basicConfig(level=logging.ERROR)
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
from construct_eval.serving.scripted_server import ScriptedServer, Reply
seen = []
def script(req):
    seen.append(req.body)
    rf = req.body.get("response_format")
    return Reply(json.dumps({"a": "x"}) if rf else "The answer is fine.")
with ScriptedServer(script) as server:
    import os
    os.environ["OPENAI_BASE_URL"] = server.base_url
    os.environ["OPENAI_API_BASE"] = server.base_url
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    from tlm import TLM
    from tlm.config.schema import Config
    cfg = Config(model="qwen-local", provider="openai", api_base=server.base_url, api_key="sk-local", quality_preset="low", reasoning_effort="low")
    tlm = TLM(config=cfg)
    schema = {"type":"object","properties":{"claim_id":{"type":"string"},"amount":{"type":"integer"}},"required":["claim_id","amount"],"additionalProperties":False}
    msgs = [{"role":"user","content":"Extract: claim CLM-1, amount 5"}]
    response = {"chat_completion": {"id":"x","object":"chat.completion","created":0,"model":"qwen-local","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":json.dumps({"claim_id":"CLM-1","amount":5})}}]}}
    try:
        out = tlm.score(response=response, messages=msgs, model="openai/qwen-local", api_base=server.base_url, api_key="sk-local",
                        response_format={"type":"json_schema","json_schema":{"name":"x","schema":schema,"strict":True}})
        print("RESULT", json.dumps(out, default=str)[:1500])
    except Exception as e:
        import traceback; traceback.print_exc()
print("REQUESTS", len(seen))
for b in seen[:8]:
    print(json.dumps({k: v for k, v in b.items() if k != "messages"})[:400])
    print("   user:", b["messages"][-1]["content"][:300].replace("\n"," "))
