"""Driving the course hub's pages in Chromium (playwright's sync API, imported where used):
the login page, nbgrader's Assignments tab in JupyterLab, the formgrader."""

from browser_helpers import PAGE_MS

# A server's first start imports JupyterLab and nbgrader on a busy machine.
SPAWN_MS = 180_000


def log_in(page, hub_url: str, name: str, password: str, screenshot=None) -> None:
    """Log in on the hub's login page; wait until the user's JupyterLab has loaded."""
    from playwright.sync_api import expect

    page.goto(f"{hub_url}/hub/login")
    expect(page.locator("#login_submit")).to_be_visible()
    if screenshot:
        page.screenshot(path=str(screenshot))
    page.locator("input[name=username]").fill(name)
    page.locator("input[name=password]").fill(password)
    page.locator("#login_submit").click()
    page.wait_for_url(f"**/user/{name}/lab**", timeout=SPAWN_MS)
    expect(nbgrader_menu(page)).to_be_visible(timeout=SPAWN_MS)


def nbgrader_menu(page):
    """The Nbgrader entry of JupyterLab's menu bar."""
    return page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader")


def open_assignment_list(page):
    """Nbgrader > Assignment List; the list's panel once it has loaded the released ones."""
    from playwright.sync_api import expect

    nbgrader_menu(page).click()
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").first.click()
    released = page.locator("#released_assignments_list")
    expect(released).to_be_visible(timeout=PAGE_MS)
    expect(page.locator("#released_assignments_list_loading")).to_be_hidden(timeout=PAGE_MS)
    return page


def assignment_row(page, section: str, assignment: str):
    """The row of ``assignment`` in a section of the list (released, fetched, submitted)."""
    return page.locator(f"#{section}_assignments_list .list_item", has_text=assignment).first
