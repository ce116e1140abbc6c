"""ember.profiler: where the time goes, as torch.profiler.

    with ember.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with ember.profiler.record_function("model_inference"):
            model(x)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

Events are ember functions and Tensor methods/operators ("ember::add"), nn.functional
functions, module calls ("nn.Module: Linear"), backward passes ("autograd::backward", one
event: the engine runs in C++) and record_function regions. See docs/python-api.md.
"""
from ember.profiler._events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401
from ember.profiler._recorder import record_function  # noqa: F401
from ember.profiler._trace import tensorboard_trace_handler  # noqa: F401
from ember.profiler.profiler import (ProfilerAction, ProfilerActivity, kineto_available, profile,  # noqa: F401
                                     schedule, supported_activities)

__all__ = ["profile", "record_function", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available"]
