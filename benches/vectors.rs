//! Exact vector search: the cosine of a query with every stored int8 vector, then the 100
//! nearest, at 10k and 100k memories (384-d, as all-MiniLM-L6-v2). Random unit vectors: the
//! cost does not depend on the values.

use criterion::{Criterion, criterion_group, criterion_main};
use mem::embed::vectors::{Key, VectorStore};

const DIM: usize = 384;

fn unit(rng: &mut fastrand::Rng) -> Vec<f32> {
    let mut v: Vec<f32> = (0..DIM).map(|_| rng.f32() - 0.5).collect();
    mem::embed::normalize(&mut v);
    v
}

fn store(n: usize) -> VectorStore {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut store = VectorStore::new([0; 32], DIM);
    for i in 0..n {
        let key = Key { file: [0; 16], text: [0; 16] };
        store.insert(&format!("m{i:06}"), key, &unit(&mut rng));
    }
    store
}

fn nearest(c: &mut Criterion) {
    let mut group = c.benchmark_group("vectors");
    let query = unit(&mut fastrand::Rng::with_seed(1));
    for n in [10_000, 100_000] {
        let store = store(n);
        group.bench_function(format!("nearest_100_of_{}k", n / 1000), |b| {
            b.iter(|| store.nearest(std::hint::black_box(&query), 100))
        });
    }
    group.finish();
}

criterion_group!(benches, nearest);
criterion_main!(benches);
