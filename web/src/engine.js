// The page's one link to the server: the WebSocket of `GET /v1/ws`, which
// carries KataGo's analysis protocol (one JSON query or action per text
// message, one response per message back). Responses are routed to the
// callback of their query's id.

const KEY_STORE = "engine.key";

export const storedKey = () => localStorage.getItem(KEY_STORE) ?? "";
export const storeKey = (key) =>
  key ? localStorage.setItem(KEY_STORE, key) : localStorage.removeItem(KEY_STORE);

export class Engine {
  /**
   * `onState(state)` hears "connecting", "open", "needs-key" (the socket
   * closed before it ever opened with this key: keys are on and ours is
   * missing or wrong — browsers do not show a WebSocket's HTTP status) or
   * "closed" (the server went away).
   */
  constructor(onState) {
    this.onState = onState;
    this.handlers = new Map();
    this.next = 0;
    this.socket = null;
    this.queue = [];
    // The key a socket last opened with: failing with it again means the
    // server is down, not that the key is wrong.
    this.openedWith = null;
  }

  connect() {
    const key = storedKey();
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const url = `${scheme}//${location.host}/v1/ws` + (key ? `?key=${encodeURIComponent(key)}` : "");
    const socket = new WebSocket(url);
    this.socket = socket;
    let opened = false;
    this.onState("connecting");
    socket.onopen = () => {
      opened = true;
      this.openedWith = key;
      this.onState("open");
      for (const text of this.queue.splice(0)) socket.send(text);
    };
    socket.onmessage = (e) => {
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      const handler = this.handlers.get(msg.id);
      if (handler) handler(msg);
      else if (msg.error) console.warn("engine:", msg.error);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      // Queries in flight are lost with the connection: tell their owners.
      for (const handler of this.handlers.values()) handler({ error: "connection closed", closed: true });
      this.handlers.clear();
      if (opened) {
        // The server closes idle sockets (wsIdleTimeoutSeconds): come back
        // once at once; the page re-sends what it still needs.
        this.onState("connecting");
        setTimeout(() => this.connect(), 200);
      } else {
        this.onState(this.openedWith === key ? "closed" : "needs-key");
      }
    };
  }

  send(obj) {
    const text = JSON.stringify(obj);
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(text);
    else this.queue.push(text);
  }

  /**
   * Sends an analysis query; `onResponse(msg)` hears each response (and
   * errors). Returns the id; the handler is dropped after the final one.
   */
  analyze(query, onResponse) {
    const id = `q${++this.next}`;
    this.handlers.set(id, (msg) => {
      // A warning (an unknown field, say) does not stop the query.
      if (msg.warning && !msg.error) return;
      if (msg.error || !msg.isDuringSearch) this.handlers.delete(id);
      onResponse(msg);
    });
    this.send({ ...query, id });
    return id;
  }

  /** Sends an action (`query_models`, ...); `onResponse` hears its one answer. */
  action(name, onResponse) {
    const id = `a${++this.next}`;
    this.handlers.set(id, (msg) => {
      this.handlers.delete(id);
      onResponse(msg);
    });
    this.send({ id, action: name });
    return id;
  }

  /** Stops a query; its handler hears nothing more. */
  terminate(id) {
    if (!id || !this.handlers.has(id)) return;
    this.handlers.delete(id);
    this.send({ id: `t${++this.next}`, action: "terminate", terminateId: id });
  }
}
