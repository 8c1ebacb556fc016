"""Waiting for a kernel to be ready without jupyter_client's last 0.2 s.

``wait_for_ready`` ends by reading the output channel until it has been silent for 0.2 s,
and grading starts two kernels per submission: 0.4 s of every job spent listening to
silence. Here a kernel is ready once it has answered a kernel_info request and its own
"idle" for that request has come on the output channel: that proves the channel subscribed
(what the silence was for), and nbclient reads a cell's output by its request's id, so a
message left over from before is never taken for a cell's.
"""

import time

ROUND = 1.0  # seconds each request waits for its answer before the next one is sent
# Seconds for the request's "idle" once answered: it follows the answer at once on a
# subscribed channel; missing, it was published before the subscription, so ask again.
IDLE_WAIT = 0.2


async def kernel_ready(client: object, timeout: float) -> None:
    """Return once the kernel of ``client`` (an async KernelClient) answers and its output
    channel is subscribed; RuntimeError when it died or ``timeout`` seconds went by."""
    deadline = time.monotonic() + timeout
    while True:
        request = client.kernel_info()
        reply = await reply_to(client.get_shell_msg, request, ROUND)
        if reply is not None:
            client._handle_kernel_info_reply(reply)
            if await _idle_for(client.get_iopub_msg, request, IDLE_WAIT) is not None:
                return
        if not await client._async_is_alive():
            raise RuntimeError("the kernel died before it answered")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the kernel did not answer within {timeout:g} s")


async def reply_to(receive: object, request: str, wait: float) -> dict | None:
    """The message answering ``request`` among those ``receive`` (a channel's async
    ``get_*_msg``) gives within ``wait`` s, or None."""
    end = time.monotonic() + wait
    while (left := end - time.monotonic()) > 0:
        try:
            message = await receive(timeout=left)
        except Exception:  # queue.Empty on timeout; a closed channel answers no more either
            return None
        if message["parent_header"].get("msg_id") == request:
            return message
    return None


async def _idle_for(receive: object, request: str, wait: float) -> dict | None:
    """The "idle" status of ``request`` on the output channel within ``wait`` s."""
    end = time.monotonic() + wait
    while (left := end - time.monotonic()) > 0:
        message = await reply_to(receive, request, left)
        if message is None:
            return None
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            return message
    return None
