// Entry point: styles (Shudan's, then ours) and the app.
import "@sabaki/shudan/css/goban.css";
import "./style.css";
import { render } from "preact";
import { App } from "./app.jsx";

render(<App />, document.getElementById("app"));
