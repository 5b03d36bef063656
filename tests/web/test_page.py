"""The board page in a real browser against a real `engine serve`.

Most tests use the stand-in search (`-stub-search`: fast, made-up values);
`test_real_net_plays_and_analyses` runs the project's small net. Hooks used
(docs/web.md): `/?size=9&color=black&visits=50`, `data-vertex` and
`data-sign` on each board point, `data-testid="top-move"`, and
`data-testid="winrate-graph"` with `data-points`."""

import hashlib
import os
import re
import time
from pathlib import Path

from playwright.sync_api import expect

from conftest import HUMAN_NET, NET, SHOTS, Console, Server

GAME = "/?size=9&color=black&visits=50"


def open_game(page, server, query=GAME):
    page.goto(server.url + query)
    expect(page.locator(".conn")).to_have_text("open")
    expect(page.locator("[data-vertex]")).to_have_count(81)


def stones(page, sign):
    return page.locator(f'[data-vertex][data-sign="{sign}"]')


def points(page):
    return int(page.get_by_test_id("winrate-graph").get_attribute("data-points"))


def play(page, vertex, black_count):
    """Clicks `vertex` (the user is Black) and waits for the engine's answer."""
    page.locator(f'[data-vertex="{vertex}"]').click()
    expect(page.locator(f'[data-vertex="{vertex}"]')).to_have_attribute("data-sign", "1")
    expect(stones(page, -1)).to_have_count(black_count)


def empty_point(page):
    """A point to play against the real net, which picks its own."""
    for v in ["E5", "C3", "G7", "C7", "G3", "E3", "E7"]:
        if page.locator(f'[data-vertex="{v}"]').get_attribute("data-sign") == "0":
            return v
    raise AssertionError("no empty point left to try")


def test_page_loads_without_console_error(page, stub_server):
    open_game(page, stub_server)
    assert page.title() == "engine"
    expect(page.locator('[data-vertex="A1"]')).to_have_count(1)
    # GTP coordinates skip I.
    expect(page.locator('[data-vertex="J9"]')).to_have_count(1)
    expect(page.locator('[data-vertex^="I"]')).to_have_count(0)
    assert stones(page, 0).count() == 81
    expect(page.get_by_test_id("winrate-graph")).to_be_visible()


def test_click_plays_and_engine_answers(page, stub_server):
    open_game(page, stub_server)
    play(page, "D4", 1)
    expect(stones(page, 1)).to_have_count(1)
    # The arrow keys walk back and forth through the game.
    page.keyboard.press("ArrowLeft")
    expect(stones(page, -1)).to_have_count(0)
    expect(stones(page, 1)).to_have_count(1)
    page.keyboard.press("Home")
    expect(stones(page, 1)).to_have_count(0)
    page.keyboard.press("End")
    expect(stones(page, -1)).to_have_count(1)
    # An occupied point is refused without a word to the engine.
    page.locator('[data-vertex="D4"]').click()
    expect(page.locator(".message")).to_contain_text("not a legal move")
    # Playing by keyboard: a point typed into the move field.
    field = page.get_by_label("Your move (e.g. D4 or pass)")
    field.fill("c3")
    field.press("Enter")
    expect(page.locator('[data-vertex="C3"]')).to_have_attribute("data-sign", "1")
    expect(stones(page, -1)).to_have_count(2)
    page.get_by_role("button", name="Undo").click()
    # Undo takes back the engine's answer and the user's move.
    page.get_by_role("button", name="Undo").click()
    expect(stones(page, 1)).to_have_count(0)
    expect(stones(page, -1)).to_have_count(0)


def test_analysis_appears(page, stub_server):
    open_game(page, stub_server)
    expect(page.get_by_test_id("top-move").first).to_be_visible()
    play(page, "E5", 1)
    top = page.get_by_test_id("top-move")
    expect(top.first).to_be_visible()
    # Top moves are empty points of the board.
    for i in range(top.count()):
        assert top.nth(i).get_attribute("data-sign") == "0"
    expect(page.locator(".top-moves tbody tr").first).to_be_visible()
    # Hovering a top move shows its principal variation as numbered stones
    # (the stub's PV is the move itself), and data-sign stays the position's.
    move = top.first.get_attribute("data-vertex")
    page.mouse.move(0, 0)
    top.first.hover()
    label = page.locator(f'[data-vertex="{move}"] .shudan-marker')
    expect(label).to_have_text("1")
    expect(page.locator(f'[data-vertex="{move}"]')).to_have_attribute("data-sign", "0")
    page.mouse.move(0, 0)
    expect(label).to_have_count(0)


def test_graph_grows(page, stub_server):
    open_game(page, stub_server)
    expect(page.get_by_test_id("winrate-graph")).not_to_have_attribute("data-points", "0")
    play(page, "C3", 1)
    after_one = points(page)
    play(page, "G7", 2)
    expect(page.get_by_test_id("winrate-graph")).not_to_have_attribute("data-points", str(after_one))
    assert points(page) > after_one
    # A click on the graph's left edge goes back to the start.
    graph = page.get_by_test_id("winrate-graph")
    box = graph.bounding_box()
    page.mouse.click(box["x"] + 2, box["y"] + box["height"] / 2)
    expect(stones(page, 1)).to_have_count(0)


SGF = "(;GM[1]FF[4]SZ[9]KM[6.5]RU[Japanese]AB[cc];W[ee];B[dd](;W[ef];B[])(;W[aa]))\n"


def sgf_moves(text):
    return re.findall(r";([BW])\[([a-s]{0,2})\]", text)


def test_sgf_round_trip(page, stub_server, tmp_path):
    open_game(page, stub_server)
    src = tmp_path / "in.sgf"
    src.write_text(SGF)
    page.get_by_test_id("sgf-open").set_input_files(str(src))
    expect(page.locator(".message")).to_contain_text("4 moves")
    # C7 from the setup, D6 played; E5 and E4 White's.
    expect(page.locator('[data-vertex="C7"]')).to_have_attribute("data-sign", "1")
    expect(page.locator('[data-vertex="D6"]')).to_have_attribute("data-sign", "1")
    expect(page.locator('[data-vertex="E4"]')).to_have_attribute("data-sign", "-1")
    with page.expect_download() as info:
        page.get_by_test_id("sgf-save").click()
    saved = Path(info.value.path()).read_text()
    # The main line, setup, size, komi and rules come back.
    assert sgf_moves(saved) == [("W", "ee"), ("B", "dd"), ("W", "ef"), ("B", "")]
    assert "AB[cc]" in saved and "SZ[9]" in saved and "KM[6.5]" in saved
    assert "RU[japanese]" in saved


def test_sgf_drop_opens_it(page, stub_server):
    open_game(page, stub_server)
    # What a drop of a file on the page delivers, made in the page.
    page.evaluate(
        """(text) => {
            const dt = new DataTransfer();
            dt.items.add(new File([text], "dropped.sgf"));
            window.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, cancelable: true }));
        }""",
        SGF,
    )
    expect(page.locator(".message")).to_contain_text("Opened dropped.sgf: 4 moves")
    expect(page.locator('[data-vertex="E4"]')).to_have_attribute("data-sign", "-1")


def test_new_game_form_and_handicap(page, stub_server):
    open_game(page, stub_server)
    page.get_by_text("New game").click()
    page.get_by_label("Size").select_option("13")
    page.get_by_label("You play").select_option("W")
    page.get_by_label("Handicap").select_option("4")
    page.get_by_role("button", name="Start").click()
    expect(page.locator("[data-vertex]")).to_have_count(169)
    # Four handicap stones on the 4-4 points; White (the user) moves first.
    for v in ("D4", "K4", "D10", "K10"):
        expect(page.locator(f'[data-vertex="{v}"]')).to_have_attribute("data-sign", "1")
    expect(stones(page, 1)).to_have_count(4)
    expect(page.get_by_test_id("status")).to_contain_text("Your move (White)")
    page.locator('[data-vertex="G7"]').click()
    expect(page.locator('[data-vertex="G7"]')).to_have_attribute("data-sign", "-1")
    expect(stones(page, 1)).to_have_count(5)

    # Every size the engine takes is offered, not only the usual three.
    if not page.get_by_label("Size").is_visible():
        page.get_by_text("New game").click()
    page.get_by_label("Size").select_option("37")
    page.get_by_role("button", name="Start").click()
    expect(page.locator("[data-vertex]")).to_have_count(37 * 37)
    # Columns past the 25th are named as the engine names them (AA, AB, ...).
    expect(page.locator('[data-vertex="AM37"]')).to_have_attribute("data-sign", "0")


def test_resign_and_two_passes_end_the_game(page, stub_server, tmp_path):
    open_game(page, stub_server)
    play(page, "E5", 1)
    page.get_by_role("button", name="Resign").click()
    expect(page.get_by_test_id("status")).to_contain_text("Game over: W+R")
    # A game opened from SGF ending in Black's pass: White (now the user)
    # passes too, and the page counts it (the stub's ownership is all 0,
    # the rules japanese: no territory, no captures, komi 6.5).
    src = tmp_path / "end.sgf"
    src.write_text(SGF)
    page.get_by_test_id("sgf-open").set_input_files(str(src))
    page.get_by_role("button", name="Pass").click()
    expect(page.get_by_test_id("status")).to_contain_text("Game over: W+6.5")
    with page.expect_download() as info:
        page.get_by_test_id("sgf-save").click()
    assert "RE[W+6.5]" in Path(info.value.path()).read_text()


def test_phone_has_no_horizontal_scroll(browser, stub_server):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        console = Console(page)
        for size in (9, 19):
            page.goto(f"{stub_server.url}/?size={size}&color=black&visits=50")
            expect(page.locator("[data-vertex]")).to_have_count(size * size)
            expect(page.get_by_test_id("top-move").first).to_be_visible()
            width = page.evaluate("document.scrollingElement.scrollWidth")
            assert width <= 390, f"{size}x{size}: scrollWidth {width}"
            # The whole board is on screen.
            box = page.locator(".shudan-goban").bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        page.locator('[data-vertex="E5"]').tap()
        expect(page.locator('[data-vertex="E5"]')).to_have_attribute("data-sign", "1")
        # No hover on a phone: a tap on a top move's row shows its line.
        row = page.locator(".top-moves tbody tr").first
        expect(row).to_be_visible()
        move = row.locator("td").first.inner_text()
        row.tap()
        expect(page.locator(f'[data-vertex="{move}"] .shudan-marker')).to_have_text("1")
        assert console.errors == []
    finally:
        ctx.close()


def test_keys_page_open_api_asks_for_key(browser, tmp_path):
    secret = "s3cret-for-the-page"
    keys = tmp_path / "keys.toml"
    keys.write_text(
        f'[[key]]\nname = "web"\nsha256 = "{hashlib.sha256(secret.encode()).hexdigest()}"\n'
        "maxVisits = 300\n"
    )
    server = Server("-stub-search", "-keys", str(keys))
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        # The page itself needs no key.
        response = page.goto(server.url + GAME)
        assert response.status == 200
        expect(page.locator(".conn")).to_have_text("needs-key")
        # A wrong key: the socket fails again, the field stays.
        page.locator(".key input").fill("wrong")
        page.locator(".key button").click()
        expect(page.locator(".conn")).to_have_text("needs-key")
        page.locator(".key input").fill(secret)
        page.locator(".key button").click()
        expect(page.locator(".conn")).to_have_text("open")
        assert page.evaluate("localStorage.getItem('engine.key')") == secret
        play(page, "E5", 1)
        # The live analysis asks for 2000 visits, over the key's 300: the
        # page learns the limit from the refusal and asks again within it.
        expect(page.get_by_test_id("top-move").first).to_be_visible()
        expect(page.locator(".message")).to_have_count(0)
        # A reload keeps the key (local storage only).
        page.reload()
        expect(page.locator(".conn")).to_have_text("open")
    finally:
        ctx.close()
        server.stop()


def screenshot(page, name):
    """A screenshot into SHOTS, made small (256 colours) when Pillow is there."""
    path = os.path.join(SHOTS, name)
    page.screenshot(path=path)
    try:
        from PIL import Image
    except ImportError:
        return
    Image.open(path).convert("RGB").quantize(colors=256).save(path, optimize=True)


def test_an_idle_socket_closed_by_the_server_comes_back(page):
    server = Server("-stub-search", "-override-config", "wsIdleTimeoutSeconds=1")
    try:
        open_game(page, server, GAME + "&analysisVisits=200")
        expect(page.get_by_test_id("top-move").first).to_be_visible()
        # The finished analysis leaves the socket idle: the server closes
        # it, the page reconnects without running the search again.
        page.wait_for_timeout(2500)
        expect(page.locator(".conn")).to_have_text("open")
        expect(page.get_by_test_id("top-move").first).to_be_visible()
        play(page, "E5", 1)
    finally:
        server.stop()


def test_real_net_plays_and_analyses(browser, net_server):
    """The project's own 9x9 net behind the page; also writes the
    screenshots of docs/ when WEB_SCREENSHOTS names a folder."""
    ctx = browser.new_context(viewport={"width": 1100, "height": 680})
    try:
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        console = Console(page)
        t0 = time.monotonic()
        page.goto(net_server.url + "/?size=9&color=black&visits=50&analysisVisits=400")
        expect(page.get_by_test_id("top-move").first).to_be_visible()
        first_analysis = time.monotonic() - t0
        print(f"\nweb: page load to first analysis on the net: {first_analysis:.2f} s")
        for i in range(3):
            play(page, empty_point(page), i + 1)
        expect(page.get_by_test_id("top-move").first).to_be_visible()
        # Let the analysis gather some visits before the pictures.
        page.wait_for_timeout(1500)
        if SHOTS:
            screenshot(page, "web-desktop.png")
            phone = ctx.browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
            p2 = phone.new_page()
            p2.goto(net_server.url + "/?size=9&color=black&visits=50&analysisVisits=400")
            for i in range(2):
                play(p2, empty_point(p2), i + 1)
            expect(p2.get_by_test_id("top-move").first).to_be_visible()
            p2.wait_for_timeout(1500)
            screenshot(p2, "web-phone.png")
            phone.close()
        assert console.errors == []
    finally:
        ctx.close()


# White's moves on the first line: mistakes for any net.
BLUNDERS = "(;GM[1]FF[4]SZ[9]KM[7]RU[Chinese];B[ee];W[cc];B[gc];W[aa];B[cg];W[ia];B[gg];W[ai])\n"


def open_sgf(page, tmp_path, text, moves):
    src = tmp_path / "game.sgf"
    src.write_text(text)
    page.get_by_test_id("sgf-open").set_input_files(str(src))
    expect(page.locator(".message")).to_contain_text(f"{moves} moves")


def test_review_marks_mistakes_on_the_real_net(browser, net_server, tmp_path):
    """The whole-game review (fast mode, 8 and 16 visits on this server):
    the mistakes on the graph, in the list, and on the board."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        console = Console(page)
        open_game(page, net_server)
        open_sgf(page, tmp_path, BLUNDERS, 8)
        requests = []
        page.on("request", lambda r: "/v1/reviews" in r.url and requests.append((r.method, r.post_data)))
        page.get_by_test_id("review-start").click()
        status = page.get_by_test_id("review-status")
        expect(status).to_have_attribute("data-status", "done")
        method, body = requests[0]
        assert method == "POST"
        assert '"rules":"chinese"' in body and '"komi":7' in body and '"boardXSize":9' in body
        assert '["W","A9"]' in body
        assert any(m == "GET" for m, _ in requests)
        mistakes = page.get_by_test_id("mistake")
        expect(mistakes.first).to_be_visible()
        n = mistakes.count()
        assert 1 <= n <= 8
        expect(page.get_by_test_id("mistake-marker")).to_have_count(n)
        # The review's values fill the graph: the position after each of
        # the 8 moves (and the start, once the live analysis was there).
        expect(page.get_by_test_id("winrate-graph")).to_have_attribute("data-points", re.compile("^[89]$"))
        # A click on a mistake goes to its move: the move marked, the
        # engine's choice shown.
        first = mistakes.first
        turn = int(first.get_attribute("data-turn"))
        move, best = first.get_attribute("data-move"), first.get_attribute("data-best")
        page.keyboard.press("Home")
        first.locator("button").click()
        expect(page.locator(".captures")).to_contain_text(f"Move {turn + 1} ")
        expect(page.locator(f'[data-vertex="{move}"]')).to_have_class(re.compile("shudan-marker_triangle"))
        if best not in (move, "pass"):
            expect(page.locator(f'[data-vertex="{best}"]')).to_have_class(re.compile("shudan-marker_circle"))
        assert console.errors == []
    finally:
        ctx.close()


def test_review_cancel_deletes_the_job(page, tmp_path):
    """Cancel during a review too long to finish first: DELETE, cancelled."""
    server = Server("-model", NET, "-config", "configs/serve.toml", "-override-config",
                    "numAnalysisThreads=2,reviewFastVisits=100000")
    try:
        open_game(page, server)
        open_sgf(page, tmp_path, BLUNDERS, 8)
        page.get_by_test_id("review-start").click()
        status = page.get_by_test_id("review-status")
        expect(status).to_have_attribute("data-status", re.compile("queued|running"))
        with page.expect_request(lambda r: r.method == "DELETE" and "/v1/reviews/" in r.url):
            page.get_by_test_id("review-cancel").click()
        expect(status).to_have_attribute("data-status", "cancelled")
        expect(page.get_by_test_id("mistake")).to_have_count(0)
        # A new review can start.
        expect(page.get_by_test_id("review-start")).to_be_enabled()
    finally:
        server.stop()


def test_review_on_the_stub_finishes(page, stub_server, tmp_path):
    """The stub's losses are all 0: no mistake, but a finished review."""
    open_game(page, stub_server)
    expect(page.get_by_test_id("review-start")).to_be_disabled()
    open_sgf(page, tmp_path, BLUNDERS, 8)
    page.get_by_test_id("review-start").click()
    expect(page.get_by_test_id("review-status")).to_have_attribute("data-status", "done")
    expect(page.get_by_test_id("review-status")).to_contain_text("Review done")
    expect(page.get_by_test_id("mistake-marker")).to_have_count(page.get_by_test_id("mistake").count())


def heat_labels(page):
    """The heat labels' texts (Shudan draws an empty one on unlabelled heat)."""
    return [t.strip() for t in page.locator(".shudan-heatlabel").all_inner_texts() if t.strip()]


PERCENT = re.compile(r"^\d+(\.\d)?%$")


def test_policy_heat_toggle(page, stub_server):
    open_game(page, stub_server)
    # The visits heat: the top moves, labels with win rate, lead, visits.
    expect(page.get_by_test_id("top-move").first).to_be_visible()
    expect(page.locator(".shudan-heat").first).to_be_visible()
    assert heat_labels(page) and all("\n" in t for t in heat_labels(page))
    page.get_by_test_id("policy-heat").check()
    # The policy (the stub's is even over its candidates): heat on the
    # board, percentages only as labels.
    expect(page.locator(".shudan-vertex.shudan-heat_9").first).to_be_visible()
    expect(page.locator(".shudan-heatlabel", has_text=PERCENT).first).to_be_visible()
    labels = heat_labels(page)
    assert labels and all(PERCENT.match(t) for t in labels), labels
    page.get_by_test_id("policy-heat").uncheck()
    expect(page.locator(".shudan-heatlabel", has_text=re.compile(r"[BW]\+")).first).to_be_visible()


def test_human_profile_hidden_without_a_human_net(page, stub_server):
    open_game(page, stub_server)
    expect(page.locator(".new-game")).to_have_attribute("data-human-net", "false")
    page.get_by_text("New game").click()
    expect(page.get_by_label("Strength (visits)")).to_be_visible()
    expect(page.get_by_test_id("human-profile")).to_have_count(0)


def test_human_profile_plays_with_a_human_net(page):
    """A human SL net beside the main one (-human-model; the random-weight
    test net): profiles offered, the engine's query carries the profile."""
    server = Server("-model", NET, "-human-model", HUMAN_NET, "-config", "configs/serve.toml",
                    "-override-config", "numAnalysisThreads=2")
    try:
        sent, received = [], []

        def watch(ws):
            ws.on("framesent", lambda f: sent.append(f))
            ws.on("framereceived", lambda f: received.append(f))

        page.on("websocket", watch)
        open_game(page, server)
        expect(page.locator(".new-game")).to_have_attribute("data-human-net", "true")
        page.get_by_text("New game").click()
        page.get_by_test_id("human-profile").select_option("rank_5k")
        page.get_by_role("button", name="Start").click()
        play(page, "E5", 1)
        assert any('"humanSLProfile":"rank_5k"' in f and '"includePolicy":true' in f for f in sent), sent
        # The answer the move is drawn from carries the human policy.
        assert any('"humanPolicy"' in f for f in received)
    finally:
        server.stop()


# docs/tsumego.md's corner: White to kill Black's five stones (B9 does).
CORNER = ("(;GM[1]FF[4]SZ[9]KM[7]RU[Chinese]PL[W]AB[ab][bb][cb][db][da]"
          "AW[ac][bc][cc][dc][ec][eb][ea])\n")


def test_solve_this_corner_on_the_real_net(browser, net_server, tmp_path):
    """*Solve this corner* on the project's net (400 visits): the query
    carries the tsumego field, the correct first move is marked, the
    groups' statuses and a refutation are listed."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        console = Console(page)
        sent = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(f)))
        open_game(page, net_server, "/?size=9&color=black&visits=50&analysisVisits=50")
        open_sgf(page, tmp_path, CORNER, 0)
        page.get_by_test_id("solve-start").click()
        status = page.get_by_test_id("solve-status")
        expect(status).to_have_attribute("data-status", "done")
        assert any('"tsumego":{"region":"auto","goal":"auto"' in f for f in sent), sent
        expect(status).to_contain_text("White to kill: B9")
        expect(page.locator('[data-vertex="B9"]')).to_have_class(re.compile("shudan-marker_square"))
        expect(page.get_by_test_id("solve-winning")).to_have_text(["B9"])
        black = page.get_by_test_id("solve-group").filter(has_text="Black D9")
        expect(black).to_have_text("Black D9 (5 stones): dead")
        expect(page.get_by_test_id("solve-group").filter(has_text="White")).to_contain_text("alive")
        # A wrong first move's refutation, shown on the board on hover.
        wrong = page.get_by_test_id("solve-refutation").first
        expect(wrong).to_contain_text("Wrong:")
        # The search's run of passes at the end is shown once.
        expect(wrong).not_to_contain_text("pass pass")
        move = wrong.get_attribute("data-move")
        wrong.locator("button").hover()
        expect(page.locator(f'[data-vertex="{move}"]')).to_have_class(re.compile("shudan-marker_label"))
        # Another position: the answer goes.
        page.locator('[data-vertex="B9"]').click()
        expect(page.locator('[data-vertex="B9"]')).to_have_attribute("data-sign", "-1")
        expect(status).to_have_count(0)
        assert console.errors == []
    finally:
        ctx.close()


def test_solve_on_an_empty_board_says_why(page, stub_server):
    """No stones: the server's region error, and the page goes on."""
    open_game(page, stub_server)
    page.get_by_test_id("solve-start").click()
    status = page.get_by_test_id("solve-status")
    expect(status).to_have_attribute("data-status", "error")
    expect(status).to_contain_text("Cannot solve:")
    expect(status).to_contain_text("region is empty")
    expect(page.locator(".shudan-marker_square")).to_have_count(0)
    # The page keeps working: a move is played and answered.
    play(page, "E5", 1)
    expect(page.get_by_test_id("solve-start")).to_be_enabled()
