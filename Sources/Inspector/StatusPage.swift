/// `GET /`: one small page, no external assets. It asks for the token once (kept in the
/// browser's session storage) and then shows the screenshot every few seconds, now and next, and
/// the live log tail.
enum StatusPage {
    static let html = """
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
    <title>Vitrine</title>
    <style>
    body{font:14px system-ui,sans-serif;margin:1em;background:#111;color:#eee}
    img{max-width:100%;border:1px solid #444;background:#000}
    #status td{padding:2px 8px}#status td:first-child{color:#999}
    pre{background:#000;padding:.5em;height:16em;overflow:auto;font-size:12px}
    .error{color:#f66}.warning{color:#fc6}
    </style></head><body>
    <h1>Vitrine</h1>
    <form id="login" hidden><label>Token <input id="token" type="password" autocomplete="off"></label> <button>Open</button></form>
    <div id="main" hidden>
    <p><img id="shot" alt="the screen"></p>
    <table id="status"></table>
    <h2>Log</h2><pre id="log"></pre>
    </div>
    <script>
    const fields = ["entry","media","positionSeconds","nextChange","display","audioDevice","audioUnderruns","droppedFrames","stalls","itemFailures","retries","pipelineRebuilds","uptimeSeconds","scheduleFile","version"];
    function token(){ return sessionStorage.getItem("vitrine-token"); }
    function headers(){ return {"Authorization": "Bearer " + token()}; }
    async function api(path){
      const r = await fetch(path, {headers: headers()});
      if (r.status === 401 || r.status === 403) { sessionStorage.removeItem("vitrine-token"); location.reload(); }
      return r;
    }
    async function refresh(){
      const s = await (await api("/api/status")).json();
      document.getElementById("status").innerHTML = fields.filter(f => s[f] !== undefined && s[f] !== null)
        .map(f => "<tr><td>" + f + "</td><td id='status-" + f + "'></td></tr>").join("");
      for (const f of fields) { const cell = document.getElementById("status-" + f); if (cell) cell.textContent = s[f]; }
      const blob = await (await api("/api/screenshot.png")).blob();
      const img = document.getElementById("shot");
      if (img.src) URL.revokeObjectURL(img.src);
      img.src = URL.createObjectURL(blob);
    }
    async function follow(){
      // EventSource cannot send a header: the stream is read with fetch.
      const r = await api("/api/logs/stream");
      const reader = r.body.getReader(), decoder = new TextDecoder(), log = document.getElementById("log");
      let buffer = "";
      for (;;) {
        const {value, done} = await reader.read(); if (done) break;
        buffer += decoder.decode(value, {stream: true});
        let end;
        while ((end = buffer.indexOf("\\n\\n")) >= 0) {
          const event = buffer.slice(0, end); buffer = buffer.slice(end + 2);
          const data = event.split("\\n").find(l => l.startsWith("data: "));
          if (!data) continue;
          const line = JSON.parse(data.slice(6)), row = document.createElement("div");
          row.className = line.level; row.textContent = new Date(line.timeNanoseconds / 1e6).toISOString() + " " + line.level + " " + line.label + ": " + line.message;
          log.appendChild(row); while (log.childNodes.length > 500) log.removeChild(log.firstChild);
          log.scrollTop = log.scrollHeight;
        }
      }
    }
    function start(){ document.getElementById("main").hidden = false; refresh(); setInterval(refresh, 3000); follow(); }
    if (token()) start(); else {
      const form = document.getElementById("login"); form.hidden = false;
      form.onsubmit = e => { e.preventDefault(); sessionStorage.setItem("vitrine-token", document.getElementById("token").value); form.hidden = true; start(); };
    }
    </script></body></html>
    """
}
