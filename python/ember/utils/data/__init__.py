"""ember.utils.data: datasets, samplers and DataLoader (as torch.utils.data), and IDX files."""
from ember.utils.data.collate import default_collate, default_convert
from ember.utils.data.dataloader import DataLoader
from ember.utils.data.distributed import DistributedSampler
from ember.utils.data.dataset import (ConcatDataset, Dataset, IterableDataset, Subset,
                                      TensorDataset, random_split)
from ember.utils.data.dataset_extra import ChainDataset, StackDataset
from ember.utils.data.idx import read_idx
from ember.utils.data.sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                                      SubsetRandomSampler, WeightedRandomSampler)
from ember.utils.data.worker import WorkerInfo, get_worker_info

__all__ = ["ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "Subset",
           "TensorDataset", "random_split", "default_collate", "default_convert", "read_idx",
           "BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler", "WorkerInfo", "get_worker_info",
           "DistributedSampler", "ChainDataset", "StackDataset"]
